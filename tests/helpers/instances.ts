/**
 * Several real server processes behind one address, for the tests that start them
 * (tests/dispatch/instances.test.ts): a round-robin HTTP proxy in front of them, a `send` for the
 * harness that goes through it (so `call` and every flow helper built on it reach the servers),
 * and the post of a console form as a browser without JavaScript makes it (a Next server action).
 */
import http from "node:http";
import { randomInt } from "node:crypto";
import type { AddressInfo } from "node:net";
import { call, PUBLIC_URL, type Harness } from "./harness";

/** A request carrying this header goes to the instance it names, not the next one in turn. */
export const PIN_HEADER = "x-test-instance";
/** The proxy says on every answer which instance gave it. */
export const SERVED_BY = "x-test-served-by";

export interface RoundRobinProxy {
  port: number;
  /** Answers each instance gave through the proxy. */
  served: Record<string, number>;
  close(): Promise<void>;
}

/**
 * An HTTP proxy that sends each request to the next of `backends` (name → port on loopback) in
 * turn, over a new connection each time, so that one client connection kept alive still reaches
 * every instance; `PIN_HEADER` overrides the turn.
 */
export async function roundRobinProxy(backends: Record<string, number>): Promise<RoundRobinProxy> {
  const names = Object.keys(backends);
  const served: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  let turn = 0;
  const server = http.createServer((req, res) => {
    const pinned = req.headers[PIN_HEADER];
    const name = typeof pinned === "string" && names.includes(pinned) ? pinned : names[turn++ % names.length];
    const headers = { ...req.headers };
    delete headers[PIN_HEADER];
    const upstream = http.request({ host: "127.0.0.1", port: backends[name], method: req.method, path: req.url, headers, agent: false }, (answer) => {
      served[name]++;
      res.writeHead(answer.statusCode ?? 502, { ...answer.headers, [SERVED_BY]: name });
      answer.pipe(res);
    });
    upstream.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain", [SERVED_BY]: name });
      res.end(`proxy: ${error.message}`);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * A harness `send` over HTTP to `port` on loopback, each request on a connection of its own, with
 * the Host of its URL (PUBLIC_URL's, unless the request names another) and, unless it names one,
 * an X-Forwarded-For address of its own, so that the servers (TRUST_PROXY=true) count each
 * request of a race as another client's.
 */
export function httpSend(port: number): (request: Request) => Promise<Response> {
  return async (request) => {
    const url = new URL(request.url);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => (headers[name] = value));
    headers.host ??= url.host;
    headers["x-forwarded-for"] ??= `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
    if (body) headers["content-length"] = String(body.length);
    return new Promise<Response>((resolve, reject) => {
      const outgoing = http.request({ host: "127.0.0.1", port, method: request.method, path: url.pathname + url.search, headers, agent: false }, (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("error", reject);
        answer.on("end", () => {
          const status = answer.statusCode ?? 0;
          const out = new Headers();
          for (const [name, value] of Object.entries(answer.headers)) {
            if (value === undefined) continue;
            for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
          }
          resolve(new Response(NO_BODY.has(status) ? null : Buffer.concat(chunks), { status, headers: out }));
        });
      });
      outgoing.on("error", reject);
      outgoing.end(body);
    });
  };
}

const ENTITIES: Record<string, string> = { amp: "&", quot: '"', "#x27": "'", "#39": "'", lt: "<", gt: ">" };
const unescapeHtml = (text: string) => text.replace(/&(amp|quot|#x27|#39|lt|gt);/g, (_, name: string) => ENTITIES[name]);

/** The form labelled `label` (its aria-label) in a page: its hidden inputs, Next's `$ACTION_…` fields among them. */
export function hiddenFields(html: string, label: string): Record<string, string> {
  const forms = html.match(/<form\b[^>]*>[\s\S]*?<\/form>/g) ?? [];
  const form = forms.find((f) => unescapeHtml(/^<form\b[^>]*\baria-label="([^"]*)"/.exec(f)?.[1] ?? "") === label);
  if (!form) throw new Error(`no form labelled "${label}" among ${forms.length} forms`);
  const fields: Record<string, string> = {};
  for (const input of form.match(/<input\b[^>]*>/g) ?? []) {
    if (!/\btype="hidden"/.test(input)) continue;
    const name = /\bname="([^"]*)"/.exec(input)?.[1];
    if (name === undefined) continue;
    fields[unescapeHtml(name)] = unescapeHtml(/\bvalue="([^"]*)"/.exec(input)?.[1] ?? "");
  }
  return fields;
}

/** The hidden fields of the form labelled `label` on the page at `path`, as a browser fetches it (`headers` go with the request). */
export async function formOnPage(h: Harness, path: string, label: string, options: { cookie: string; headers?: Record<string, string> }): Promise<Record<string, string>> {
  const page = await call(h, path, { cookie: options.cookie, headers: options.headers });
  if (page.status !== 200) throw new Error(`${path} answered ${page.status}`);
  return hiddenFields(await page.text(), label);
}

/** Posts a form's fields to the page at `path` as a browser without JavaScript does: multipart, same-origin, with `cookie`. */
export function postForm(h: Harness, path: string, fields: Record<string, string>, options: { cookie: string; headers?: Record<string, string> }): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return h.send!(new Request(PUBLIC_URL + path, { method: "POST", body: form, headers: { ...options.headers, cookie: options.cookie, origin: PUBLIC_URL } }));
}

/**
 * Submits the form labelled `label` on the page at `path` as a browser without JavaScript does:
 * the page is fetched, and its form posted back to it with the form's hidden fields (which name
 * the server action) and `fields`. `headers` go with both requests (a PIN_HEADER among them sends
 * both to one instance).
 */
export async function submitForm(h: Harness, path: string, label: string, fields: Record<string, string>, options: { cookie: string; headers?: Record<string, string> }): Promise<Response> {
  return postForm(h, path, { ...(await formOnPage(h, path, label, options)), ...fields }, options);
}
