/**
 * A live Latchkey for tests that run a relying party over HTTP (the integration guide's module,
 * the demo application): the production listener (lib/server/node-server.ts) on
 * http://localhost:<port>, over the test database with the real clock (openid-client checks the ID
 * token's iat and exp against it), and a browser made of fetch and a cookie jar.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import { systemClock } from "../../../lib/clock";
import { createRequestListener, writeResponse, type NodeHandler } from "../../../lib/server/node-server";
import { contextFor, dispatch, resolveWorkspace } from "../../../lib/server/router";
import { createService, type Service } from "../../../lib/service";
import { signInView } from "../../../lib/sign-in/view";
import { createHarness, Jar } from "../harness";

export interface LiveServer {
  service: Service;
  publicUrl: string;
  close(): Promise<void>;
}

/**
 * Starts the listener. `wrap` puts a handler of the production server's (e.g. the demo
 * application's) in front of the listener, as server.ts does.
 */
export async function startLiveServer(wrap: (service: Service, next: NodeHandler) => NodeHandler = (_s, next) => next): Promise<LiveServer> {
  let listener: NodeHandler = (_req, res) => void res.writeHead(503).end();
  const server = http.createServer((req, res) => listener(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const publicUrl = `http://localhost:${(server.address() as AddressInfo).port}`;
  const h = await createHarness({ publicUrl });
  const service = createService(h.handle.db, h.service.config, systemClock);
  listener = wrap(service, createRequestListener(service, publicUrl, hostedPages(service, publicUrl)));
  return { service, publicUrl, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * Stands in for Next, which the listener hands the browser-facing paths: the route table's hosted
 * endpoints (authorize, the sign-in forms, logout), as Next's route.ts files answer them, and the
 * hosted sign-in page (app/t/[tenant]/sign-in): the same view, reduced to the form a browser posts
 * for the first step (the password form's fields).
 */
function hostedPages(service: Service, publicUrl: string): NodeHandler {
  return async (req, res) => {
    const url = new URL(req.url ?? "/", publicUrl);
    const match = /^\/t\/([a-z0-9-]+)\/sign-in$/.exec(url.pathname);
    if (!match || req.method !== "GET") {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers = new Headers(Object.entries(req.headers).flatMap(([name, value]) => (typeof value === "string" ? [[name, value] as [string, string]] : [])));
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      const answer = await dispatch(new Request(url, { method: req.method, headers, body }), service);
      return writeResponse(answer ?? new Response(null, { status: 404 }), res);
    }
    const workspace = await resolveWorkspace(service, match[1]!);
    if (!workspace) return void res.writeHead(404).end();
    const view = await signInView(contextFor(service, workspace), url.searchParams.get("tx") ?? "", req.headers.cookie ?? null);
    if (view.kind !== "step") return void res.writeHead(410).end(view.kind);
    const hidden = `<input type="hidden" name="tx" value="${view.txId}"><input type="hidden" name="csrf" value="${view.csrf}">`;
    let form: string;
    if (view.step.kind === "first_factor") form = `<form method="post" action="${view.basePath}/sign-in/password">${hidden}<input name="email"><input name="password" type="password"></form>`;
    // The optional passkey offer (the demo workspace makes one): "Not now".
    else if (view.step.kind === "passkey_offer" && !view.step.required) form = `<form method="post" action="${view.basePath}/sign-in/passkey/skip">${hidden}</form>`;
    else return void res.writeHead(410).end(`step ${view.step.kind} is not drawn here`);
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(form);
  };
}

/** A browser: one cookie jar; requests never follow redirects. */
export class Browser {
  readonly jar = new Jar();
  constructor(private readonly publicUrl: string) {}

  /** One request, the jar's cookies sent and updated. A form is posted as a browser on `pageOrigin` posts it (Sec-Fetch-Site). */
  async browse(url: URL | string, init: { method?: string; form?: Record<string, string>; pageOrigin?: string } = {}): Promise<Response> {
    const target = new URL(url, this.publicUrl);
    const headers: Record<string, string> = { cookie: this.jar.header() };
    let body: string | undefined;
    if (init.form) {
      body = new URLSearchParams(init.form).toString();
      headers["content-type"] = "application/x-www-form-urlencoded";
      const from = init.pageOrigin ?? target.origin;
      headers.origin = from;
      headers["sec-fetch-site"] = from === target.origin ? "same-origin" : "cross-site";
    }
    const res = await fetch(target, { method: init.method ?? (init.form ? "POST" : "GET"), headers, body, redirect: "manual" });
    this.jar.take(res);
    return res;
  }

  /**
   * Follows the authorization URL, signs in on the hosted page if it shows, and returns where the
   * browser is sent next (the application's callback, with its query).
   */
  async signIn(url: URL | string, credentials: { email: string; password: string }): Promise<URL> {
    const authorize = await this.browse(url);
    expect(authorize.status, await authorize.clone().text()).toBe(303);
    let location = new URL(authorize.headers.get("location")!, this.publicUrl);
    // The hosted page's steps (the password, then perhaps a passkey offer), each a form post.
    for (let steps = 0; location.origin === this.publicUrl && location.pathname.endsWith("/sign-in"); steps++) {
      expect(steps).toBeLessThan(3);
      const page = await this.browse(location);
      const html = await page.text();
      expect(page.status, html).toBe(200);
      const action = /<form method="post" action="([^"]+)"/.exec(html)![1]!;
      const hidden = Object.fromEntries([...html.matchAll(/type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
      const fields = action.endsWith("/sign-in/password") ? { ...hidden, ...credentials } : hidden;
      const post = await this.browse(new URL(action, this.publicUrl), { form: fields });
      expect(post.status).toBe(303);
      location = new URL(post.headers.get("location")!, this.publicUrl);
    }
    return location;
  }
}
