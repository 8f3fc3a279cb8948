/**
 * The sign-in page's kept renders (lib/server/sign-in-page.ts) in front of a stand-in for Next: an
 * HTTP server whose "render" writes the handed view's values into a page the way the real page
 * does (the transaction id, the form token, the WebAuthn challenge, a fresh CSP nonce on a script
 * and in the header), and counts what it rendered. e2e/hosted-pages.spec.ts does the same in
 * front of the real page.
 */
import { randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync, gzipSync } from "node:zlib";
import { handedView } from "../../lib/sign-in/handed-view";
import { signInPages } from "../../lib/server/sign-in-page";
import type { SignInView } from "../../lib/sign-in/view";
import type { Service } from "../../lib/service";
import { PUBLIC_URL } from "./harness";

export interface PageAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Decoded. */
  body: string;
}

export interface PageServer {
  /** Each render's handed view (undefined: none was handed), in order. */
  renders: Array<SignInView | undefined>;
  get(path: string, headers?: Record<string, string>): Promise<PageAnswer>;
  close(): Promise<void>;
  /** Runs once inside the next render (before it writes). */
  duringNextRender(run: () => void): void;
}

export const challengeOf = (view: SignInView | undefined): string =>
  view?.kind === "step" && view.webauthn.options ? String((JSON.parse(view.webauthn.options) as { challenge: string }).challenge) : "";

export async function pageServer(service: Service): Promise<PageServer> {
  const renders: Array<SignInView | undefined> = [];
  let during: (() => void) | null = null;
  const render = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const view = handedView(String(req.headers["x-request-id"]));
    renders.push(view);
    during?.();
    during = null;
    const nonce = randomBytes(18).toString("base64");
    const body =
      view?.kind === "step"
        ? `<!DOCTYPE html><html lang="${view.locale}"><script nonce="${nonce}">self.push(${JSON.stringify(JSON.stringify({ tx: view.txId, csrf: view.csrf }))})</script>` +
          `<form action="${view.basePath}/sign-in/password"><input type="hidden" name="tx" value="${view.txId}"/><input type="hidden" name="csrf" value="${view.csrf}"/></form>` +
          `<p>${view.applicationName}</p><p data-challenge="${challengeOf(view)}">${req.url}</p></html>`
        : `<!DOCTYPE html><html><p>${view?.kind ?? "no view"}</p><script nonce="${nonce}"></script></html>`;
    res.setHeader("content-security-policy", `script-src 'self' 'nonce-${nonce}'`);
    res.setHeader("link", `</style.css>; rel=preload; as="style"; nonce="${nonce}"`);
    res.setHeader("content-type", "text/html; charset=utf-8");
    if (/gzip/.test(String(req.headers["accept-encoding"] ?? ""))) {
      res.setHeader("content-encoding", "gzip");
      // Written in two pieces, as a streamed render is.
      const bytes = gzipSync(body);
      res.write(bytes.subarray(0, 10));
      res.end(bytes.subarray(10));
    } else {
      res.write(body.slice(0, 100));
      res.end(body.slice(100));
    }
  };
  const pages = signInPages(service, render);
  const server = http.createServer((req, res) => {
    req.headers["x-request-id"] = randomUUID();
    if (!pages(req, res)) {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const host = new URL(PUBLIC_URL).host;
  return {
    renders,
    duringNextRender: (run) => {
      during = run;
    },
    get: (path, headers = {}) =>
      new Promise<PageAnswer>((resolve, reject) => {
        const req = http.request({ host: "127.0.0.1", port, path, headers: { host, ...headers } }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const raw = Buffer.concat(chunks);
            const body = res.headers["content-encoding"] === "gzip" ? gunzipSync(raw).toString("utf8") : raw.toString("utf8");
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
          });
        });
        req.on("error", reject);
        req.end();
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
