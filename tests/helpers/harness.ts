/**
 * Integration-test harness: a Service over the run's test database with an injected clock,
 * workspaces seeded through the workspace file format, and endpoints called with real Requests.
 */
import { randomBytes } from "node:crypto";
import type { DatabaseHandle } from "../../db/client";
import { createService, type Service } from "../../lib/service";
import type { Clock } from "../../lib/clock";
import type { Config } from "../../lib/config";
import { dispatch } from "../../lib/server/router";
import { contextFor, resolveWorkspace } from "../../lib/server/router";
import { signInView } from "../../lib/sign-in/view";
import { importWorkspace } from "../../lib/workspaces/file";
import { sha256Base64Url } from "../../lib/crypto";
import { openTestDatabase } from "../setup/test-database";

export const PUBLIC_URL = "https://auth.example.test";

export class TestClock implements Clock {
  constructor(public current = new Date("2026-11-21T12:00:00Z").getTime()) {}
  now() {
    return new Date(this.current);
  }
  advance(ms: number) {
    this.current += ms;
  }
}

export interface Harness {
  service: Service;
  clock: TestClock;
  handle: DatabaseHandle;
  /**
   * Where `call` sends its requests: unset, the route table in this process (`dispatch`); set, for
   * example over HTTP to running servers (tests/helpers/instances.ts), which then answer the pages
   * too. `service` still reads and writes the same database for what the tests look at directly.
   */
  send?: (request: Request) => Promise<Response>;
}

/** One harness per test file; its database is closed after the file (tests/setup/per-file.ts). */
export async function createHarness(overrides: Partial<Config> = {}): Promise<Harness> {
  const handle = await openTestDatabase();
  const clock = new TestClock();
  const config: Config = {
    port: 0,
    publicUrl: PUBLIC_URL,
    databaseUrl: undefined,
    dataDir: "",
    masterKey: randomBytes(32),
    // High enough that only the tests about limits meet them.
    rateLimits: { requestsPerMinute: 100_000, failuresPer5Minutes: 1000 },
    trustProxy: false,
    workers: 1,
    // The upstream identity providers of the tests listen on loopback (a development setting;
    // tests/integration/federation/outbound.test.ts turns it off).
    allowPrivateUpstreams: true,
    ...overrides,
  };
  const service = createService(handle.db, config, clock);
  return { service, clock, handle };
}

/** A workspace id unique to this run, so files sharing one PostgreSQL database never collide. */
export function uniqueWorkspaceId(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString("hex")}`;
}

export async function seed(h: Harness, doc: object): Promise<void> {
  await importWorkspace(h.service.db, doc, { clock: h.clock, masterKey: h.service.config.masterKey });
  h.service.cache.clear();
}

export interface CallOptions {
  method?: string;
  headers?: Record<string, string>;
  form?: Record<string, string> | string;
  body?: string;
  cookie?: string;
}

/** Calls an endpoint exactly as the server would: a real Request through the route table. */
export async function call(h: Harness, path: string, options: CallOptions = {}): Promise<Response> {
  const headers = new Headers(options.headers);
  let body: string | undefined = options.body;
  if (options.form !== undefined) {
    body = typeof options.form === "string" ? options.form : new URLSearchParams(options.form).toString();
    if (!headers.has("content-type")) headers.set("content-type", "application/x-www-form-urlencoded");
  }
  if (options.cookie) headers.set("cookie", options.cookie);
  const request = new Request(PUBLIC_URL + path, { method: options.method ?? (body !== undefined ? "POST" : "GET"), headers, body });
  if (h.send) return h.send(request);
  const response = await dispatch(request, h.service);
  // Paths outside the route table are Next's (hosted pages, the catch-all 404): mark them plainly.
  if (!response) return new Response("not dispatched: served by Next", { status: 599 });
  return response;
}

export function basic(clientId: string, secret: string): string {
  const enc = (v: string) => encodeURIComponent(v).replace(/%20/g, "+");
  return "Basic " + Buffer.from(`${enc(clientId)}:${enc(secret)}`).toString("base64");
}

export function b64url(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/** Cookie jar of name=value pairs from Set-Cookie headers (attributes dropped, Max-Age=0 deletes). */
export class Jar {
  private cookies = new Map<string, string>();
  take(response: Response): this {
    for (const c of response.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      if (attrs.some((a) => /max-age=0$/i.test(a.trim()))) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(eq + 1));
    }
    return this;
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
  get(name: string) {
    return this.cookies.get(name);
  }
}

export interface AuthorizeParams {
  client_id: string;
  redirect_uri: string;
  scope?: string;
  state?: string;
  nonce?: string;
  verifier?: string;
  resource?: string;
  extra?: Record<string, string>;
}

export function authorizeQuery(p: AuthorizeParams): { query: URLSearchParams; verifier: string; state: string; nonce: string } {
  const verifier = p.verifier ?? b64url(32);
  const state = p.state ?? b64url(24);
  const nonce = p.nonce ?? b64url(24);
  const query = new URLSearchParams({
    client_id: p.client_id,
    redirect_uri: p.redirect_uri,
    response_type: "code",
    scope: p.scope ?? "openid email profile",
    state,
    nonce,
    code_challenge: sha256Base64Url(verifier),
    code_challenge_method: "S256",
    ...(p.resource ? { resource: p.resource } : {}),
    ...(p.extra ?? {}),
  });
  return { query, verifier, state, nonce };
}

/** `authorizeQuery` for `client`, with some parameters replaced (a string) or removed (null). */
export function authorizeQueryWith(client: AuthorizeParams, overrides: Record<string, string | null> = {}): URLSearchParams {
  const { query } = authorizeQuery(client);
  for (const [k, v] of Object.entries(overrides)) {
    if (v === null) query.delete(k);
    else query.set(k, v);
  }
  return query;
}

/** Drives authorize → hosted sign-in → callback; returns the callback URL and what the client keeps. */
export async function signIn(
  h: Harness,
  workspaceId: string,
  p: AuthorizeParams & { email: string; password: string },
  jar = new Jar(),
): Promise<{ callback: URL; verifier: string; state: string; nonce: string; jar: Jar }> {
  const { query, verifier, state, nonce } = authorizeQuery(p);
  const authorize = await call(h, `/t/${workspaceId}/oauth2/authorize?${query}`, { cookie: jar.header() });
  if (authorize.status !== 303) throw new Error(`authorize answered ${authorize.status}: ${await authorize.text()}`);
  jar.take(authorize);
  const location = new URL(authorize.headers.get("location")!, PUBLIC_URL);
  if (location.pathname !== `/t/${workspaceId}/sign-in`) return { callback: location, verifier, state, nonce, jar };
  const tx = location.searchParams.get("tx")!;
  const workspace = (await resolveWorkspace(h.service, workspaceId))!;
  const view = await signInView(contextFor(h.service, workspace), tx, jar.header());
  if (view.kind !== "step") throw new Error("sign-in transaction expired");
  const post = await call(h, `/t/${workspaceId}/sign-in/password`, {
    form: { tx, csrf: view.csrf, email: p.email, password: p.password },
    cookie: jar.header(),
    headers: { origin: PUBLIC_URL },
  });
  if (post.status !== 303) throw new Error(`sign-in answered ${post.status}: ${await post.text()}`);
  jar.take(post);
  const callback = new URL(post.headers.get("location")!, PUBLIC_URL);
  if (callback.origin === PUBLIC_URL) throw new Error(`sign-in failed: ${callback.searchParams.get("error")}`);
  return { callback, verifier, state, nonce, jar };
}

export async function exchangeCode(
  h: Harness,
  workspaceId: string,
  input: { code: string; redirect_uri: string; verifier: string; client_id?: string; authorization?: string },
): Promise<Response> {
  const form: Record<string, string> = { grant_type: "authorization_code", code: input.code, redirect_uri: input.redirect_uri, code_verifier: input.verifier };
  if (input.client_id) form.client_id = input.client_id;
  return call(h, `/t/${workspaceId}/oauth2/token`, { form, headers: input.authorization ? { authorization: input.authorization } : {} });
}
