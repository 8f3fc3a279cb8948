/**
 * Dispatch equivalence: every request the production server answers straight from the route
 * table (lib/server/router.ts, `machine: true`, plus the table's own 404/405/preflight answers) gets
 * the same answer through Next's route handlers (app/t/[tenant]/**\/route.ts via
 * lib/server/next-adapter.ts): status, body and headers, byte for byte. Only values that must
 * differ per request are normalized (freshly issued tokens, compared by shape), and only
 * transport headers (date, connection, keep-alive, content-length, transfer-encoding) and the
 * Vary tokens Next adds for its client router and its compression (rsc, next-router-*,
 * Accept-Encoding) are left out. Requests ask for no
 * compression (Next would gzip; the direct path never compresses).
 *
 * Needs the production build (.next). `npm test` builds first; under CI=1 a missing build fails
 * this test instead of skipping it.
 */
import http from "node:http";
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDualServer, type DualServer } from "./start-dual-server";

const root = path.resolve(import.meta.dirname, "..", "..");
const built = existsSync(path.join(root, ".next", "BUILD_ID"));
const ci = !!process.env.CI && process.env.CI !== "0" && process.env.CI !== "false";

const PUBLIC_URL = "https://auth.dispatch.test";
const WS = `dispatch-${randomBytes(4).toString("hex")}`;
const API = "https://api.dispatch.test";
const WEB = { id: "web", secret: "dispatch-web-secret-0123456789abcdef0123", redirect: "https://web.dispatch.test/callback" };
const M2M = { id: "m2m", secret: "dispatch-m2m-secret-0123456789abcdef0123" };
const SPA = { id: "spa", redirect: "https://app.dispatch.test/callback", origin: "https://app.dispatch.test" };
const USER = { email: "ada@dispatch.test", password: "correct horse battery staple" };

const workspace = {
  id: WS,
  name: "Dispatch equivalence",
  applications: [
    {
      client_id: WEB.id,
      name: "Web",
      type: "WEB_CONFIDENTIAL",
      redirect_uris: [WEB.redirect],
      identity_scopes: ["openid", "email", "profile"],
      secret: WEB.secret,
      account_security: true,
    },
    {
      client_id: SPA.id,
      name: "SPA",
      type: "PUBLIC",
      redirect_uris: [SPA.redirect],
      allowed_origins: [SPA.origin],
      identity_scopes: ["openid", "email", "profile"],
    },
    { client_id: M2M.id, name: "Worker", type: "M2M", secret: M2M.secret },
  ],
  apis: [{ audience: API, name: "Things", permissions: ["read:things", "write:things"] }],
  api_grants: [
    { client_id: WEB.id, audience: API, permissions: ["read:things", "write:things"] },
    { client_id: M2M.id, audience: API, permissions: ["read:things"] },
  ],
  roles: [{ name: "reader", permissions: [{ audience: API, permissions: ["read:things"] }] }],
  users: [{ email: USER.email, name: "Ada", password: USER.password, email_verified: true, roles: ["reader"] }],
};

/** Headers that belong to the connection, not the answer. */
/** Per connection or per request on either side (X-Request-Id: a new id for each request unless one is sent). */
const TRANSPORT = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding", "x-request-id"]);
/** Vary tokens Next adds to every answer: its client router's, and its compression's (Accept-Encoding). */
const NEXT_VARY = new Set(["rsc", "next-router-state-tree", "next-router-prefetch", "next-router-segment-prefetch", "accept-encoding"]);

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

let server: DualServer | undefined;
let ports: { direct: number; next: number };

async function send(port: number, method: string, target: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  // node:http, not fetch: fetch sends the URL's host, and the listener serves PUBLIC_URL's host only.
  // Compression is negotiated per connection (Next gzips, the direct path never does): ask for none.
  const res = await new Promise<http.IncomingMessage & { text: string }>((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(body);
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method,
        path: target,
        agent: false,
        headers: { host: new URL(PUBLIC_URL).host, "accept-encoding": "identity", ...(payload ? { "content-length": String(payload.length) } : {}), ...headers },
      },
      (answer) => {
        let text = "";
        answer.setEncoding("utf8");
        answer.on("data", (chunk) => (text += chunk));
        answer.on("end", () => resolve(Object.assign(answer, { text })));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(res.headers)) {
    if (raw === undefined || TRANSPORT.has(name) || name === "set-cookie") continue;
    const value = Array.isArray(raw) ? raw.join(", ") : raw;
    if (name === "vary") {
      const tokens = value.split(",").map((t) => t.trim()).filter((t) => !NEXT_VARY.has(t.toLowerCase()));
      if (tokens.length) out[name] = tokens.join(", ");
      continue;
    }
    out[name] = value;
  }
  const cookies = res.headers["set-cookie"] ?? [];
  if (cookies.length) out["set-cookie"] = cookies.join("\n");
  return { status: res.statusCode!, headers: out, body: res.text };
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
const FORM = { "content-type": "application/x-www-form-urlencoded" };
const b64url = (n = 32) => randomBytes(n).toString("base64url");

/** Freshly issued values differ per request: compare them by shape. */
function normalize(text: string): string {
  return text
    .replace(/"access_token":"lka_[A-Za-z0-9_-]{43}"/g, '"access_token":"<lka_>"')
    // Sealed workload (M2M) tokens: fresh IV and ciphertext on every issue.
    .replace(/"access_token":"lkw_[A-Za-z0-9_-]+"/g, '"access_token":"<lkw_>"')
    .replace(/"refresh_token":"lkr_[A-Za-z0-9_-]{43}"/g, '"refresh_token":"<lkr_>"')
    .replace(/"id_token":"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"/g, '"id_token":"<jwt>"')
    .replace(/\?launch=[A-Za-z0-9_-]{43}"/g, '?launch=<handle>"')
    .replace(/"expires_at":[0-9]+/g, '"expires_at":<ms>');
}

describe.runIf(built || ci)("dispatch equivalence: direct path vs Next route handlers", () => {
  beforeAll(async () => {
    if (!built) throw new Error("No production build (.next/BUILD_ID): run `npm run build` first (npm test does).");
    server = await startDualServer({ PUBLIC_URL, RATE_LIMIT_PER_MINUTE: "0", RATE_LIMIT_FAILURES: "0", DISPATCH_WORKSPACE: JSON.stringify(workspace) });
    ports = server.ports;
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
  });

  const issuer = `/t/${WS}`;

  /** Sends one request to both listeners and requires the same answer. */
  async function same(method: string, target: string, headers: Record<string, string> = {}, body?: string | (() => string)): Promise<Answer> {
    const bodyFor = () => (typeof body === "function" ? body() : body);
    const direct = await send(ports.direct, method, target, headers, bodyFor());
    const viaNext = await send(ports.next, method, target, headers, bodyFor());
    const shape = (a: Answer) => ({ status: a.status, headers: a.headers, body: normalize(a.body) });
    expect(shape(viaNext), `${method} ${target}`).toEqual(shape(direct));
    return direct;
  }

  // ---- the flows that yield tokens (through the production listener) ----
  async function m2mToken(): Promise<string> {
    const res = await send(ports.direct, "POST", `${issuer}/oauth2/token`, { ...FORM, authorization: basic(M2M.id, M2M.secret) }, `grant_type=client_credentials&resource=${encodeURIComponent(API)}&scope=read%3Athings`);
    expect(res.status).toBe(200);
    return JSON.parse(res.body).access_token;
  }

  let sessionCookie = "";
  /** authorize → hosted sign-in (first time) → code; later calls reuse the hosted session. */
  async function code(): Promise<{ code: string; verifier: string }> {
    const verifier = b64url(32);
    const query = new URLSearchParams({
      client_id: WEB.id,
      redirect_uri: WEB.redirect,
      response_type: "code",
      scope: "openid email profile read:things",
      resource: API,
      state: b64url(24),
      nonce: b64url(24),
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
    });
    const authorize = await send(ports.direct, "GET", `${issuer}/oauth2/authorize?${query}`, sessionCookie ? { cookie: sessionCookie } : {});
    expect(authorize.status).toBe(303);
    let location = new URL(authorize.headers.location, PUBLIC_URL);
    if (location.pathname === `${issuer}/sign-in`) {
      const txCookie = authorize.headers["set-cookie"].split(";")[0];
      const page = await send(ports.direct, "GET", `${location.pathname}${location.search}`, { cookie: txCookie });
      const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1];
      expect(csrf, "the hosted sign-in form").toBeTruthy();
      const post = await send(
        ports.direct,
        "POST",
        `${issuer}/sign-in/password`,
        { ...FORM, cookie: txCookie, origin: PUBLIC_URL },
        new URLSearchParams({ tx: location.searchParams.get("tx")!, csrf: csrf!, email: USER.email, password: USER.password }).toString(),
      );
      expect(post.status).toBe(303);
      sessionCookie = post.headers["set-cookie"].split("\n").find((c) => c.startsWith("lk_session="))!.split(";")[0];
      location = new URL(post.headers.location);
    }
    return { code: location.searchParams.get("code")!, verifier };
  }

  async function humanTokens(): Promise<{ access_token: string; refresh_token: string }> {
    const { code: c, verifier } = await code();
    const res = await send(ports.direct, "POST", `${issuer}/oauth2/token`, { ...FORM, authorization: basic(WEB.id, WEB.secret) }, new URLSearchParams({ grant_type: "authorization_code", code: c, redirect_uri: WEB.redirect, code_verifier: verifier }).toString());
    expect(res.status, res.body).toBe(200);
    return JSON.parse(res.body);
  }

  // ---- the comparisons ----
  it("discovery and JWKS", async () => {
    for (const target of [
      `${issuer}/.well-known/openid-configuration`,
      `${issuer}/.well-known/openid-configuration?client_id=${WEB.id}`,
      `${issuer}/.well-known/openid-configuration?client_id=nope`,
      `${issuer}/.well-known/openid-configuration?bogus=1`,
      `/t/no-such-workspace/.well-known/openid-configuration`,
      `${issuer}/.well-known/jwks.json`,
      `${issuer}/.well-known/jwks.json?x=1`,
      // RFC 8414's metadata path of the issuer: its discovery document.
      `/.well-known/oauth-authorization-server${issuer}`,
      `/.well-known/oauth-authorization-server${issuer}?client_id=${WEB.id}`,
      `/.well-known/oauth-authorization-server${issuer}?client_id=nope`,
      `/.well-known/oauth-authorization-server${issuer}?bogus=1`,
      `/.well-known/oauth-authorization-server/t/no-such-workspace`,
    ]) {
      await same("GET", target);
    }
    const metadata = await same("GET", `/.well-known/oauth-authorization-server${issuer}?client_id=${WEB.id}`);
    expect(metadata.body).toBe((await same("GET", `${issuer}/.well-known/openid-configuration?client_id=${WEB.id}`)).body);
    const doc = JSON.parse((await same("GET", `${issuer}/.well-known/openid-configuration`)).body);
    expect(doc.issuer).toBe(`${PUBLIC_URL}${issuer}`);
  });

  it("token endpoint: errors and fresh tokens (compared by shape)", async () => {
    const token = `${issuer}/oauth2/token`;
    const m2m = { ...FORM, authorization: basic(M2M.id, M2M.secret) };
    await same("POST", token, FORM, "");
    await same("POST", token, m2m, "grant_type=password");
    await same("POST", token, { "content-type": "application/json", authorization: basic(M2M.id, M2M.secret) }, "{}");
    await same("POST", token, { ...FORM, authorization: basic(M2M.id, "wrong") }, "grant_type=client_credentials&resource=x&scope=read%3Athings");
    await same("POST", token, m2m, "grant_type=client_credentials&grant_type=client_credentials");
    await same("POST", token, m2m, `grant_type=client_credentials&resource=${encodeURIComponent(API)}&scope=write%3Athings`);
    await same("POST", token, m2m, `grant_type=client_credentials&resource=${encodeURIComponent(API)}&scope=read%3Athings&x=${"a".repeat(9000)}`);
    const cc = await same("POST", token, m2m, `grant_type=client_credentials&resource=${encodeURIComponent(API)}&scope=read%3Athings`);
    expect(JSON.parse(cc.body).access_token).toMatch(/^lkw_/);
    await same("POST", token, { ...FORM, authorization: basic(WEB.id, WEB.secret) }, "grant_type=refresh_token&refresh_token=lkr_unknown");
    // A refresh and a code exchange on each side: fresh tokens, same shape and headers.
    const [a, b] = [await humanTokens(), await humanTokens()];
    const refreshBodies = [a.refresh_token, b.refresh_token].map((t) => `grant_type=refresh_token&refresh_token=${t}`);
    await same("POST", token, { ...FORM, authorization: basic(WEB.id, WEB.secret) }, () => refreshBodies.shift()!);
    const codes = [await code(), await code()].map(({ code: c, verifier }) =>
      new URLSearchParams({ grant_type: "authorization_code", code: c, redirect_uri: WEB.redirect, code_verifier: verifier }).toString(),
    );
    const exchanged = await same("POST", token, { ...FORM, authorization: basic(WEB.id, WEB.secret) }, () => codes.shift()!);
    expect(JSON.parse(exchanged.body).id_token).toBeTruthy();
    // Browser (public) clients get CORS on the token endpoint, errors included.
    await same("POST", token, { ...FORM, origin: SPA.origin }, `grant_type=refresh_token&refresh_token=lkr_unknown&client_id=${SPA.id}`);
    await same("POST", token, { ...FORM, origin: "https://evil.example" }, `grant_type=refresh_token&refresh_token=lkr_unknown&client_id=${SPA.id}`);
  });

  it("session check and UserInfo of the same token", async () => {
    const { access_token } = await humanTokens();
    const workload = await m2mToken();
    for (const endpoint of [`${issuer}/oidc/session`, `${issuer}/oidc/userinfo`]) {
      const ok = await same("GET", endpoint, { authorization: `Bearer ${access_token}` });
      expect(ok.status).toBe(200);
      await same("GET", endpoint);
      await same("GET", endpoint, { authorization: "Bearer lka_unknown" });
      await same("GET", endpoint, { authorization: `Bearer ${workload}` });
      await same("GET", endpoint, { authorization: `Bearer ${access_token}`, origin: "https://evil.example" });
    }
  });

  it("introspection and revocation", async () => {
    const workload = await m2mToken();
    const introspect = `${issuer}/oauth2/introspect`;
    const m2m = { ...FORM, authorization: basic(M2M.id, M2M.secret) };
    const active = await same("POST", introspect, m2m, `token=${workload}`);
    expect(active.body).toContain('"active":true');
    await same("POST", introspect, { ...FORM, authorization: basic(WEB.id, WEB.secret) }, `token=${workload}`);
    await same("POST", introspect, m2m, "token=lka_unknown");
    await same("POST", introspect, m2m, `token=${workload}&token_type_hint=bogus`);
    await same("POST", introspect, FORM, `token=${workload}&client_id=${SPA.id}`);
    await same("POST", introspect, { ...FORM, authorization: basic(M2M.id, "wrong") }, `token=${workload}`);
    const revoke = `${issuer}/oauth2/revoke`;
    await same("POST", revoke, m2m, "token=lka_unknown");
    await same("POST", revoke, m2m, "");
    await same("POST", revoke, { ...FORM, authorization: basic(M2M.id, "wrong") }, "token=lka_unknown");
  });

  it("permission check: allowed, denied and its own error shapes", async () => {
    const { access_token } = await humanTokens();
    const check = `${issuer}/authorization/check`;
    const auth = { authorization: `Bearer ${access_token}`, "content-type": "application/json" };
    const allowed = await same("POST", check, auth, JSON.stringify({ resource: API, permission: "read:things", organization_id: null }));
    expect(allowed.body).toBe('{"allowed":true}');
    const denied = await same("POST", check, auth, JSON.stringify({ resource: API, permission: "write:things", organization_id: null }));
    expect(denied.body).toBe('{"allowed":false}');
    await same("POST", check, auth, "{not json");
    await same("POST", check, auth, JSON.stringify({ resource: API, permission: "read:things" }));
    await same("POST", check, { ...auth, "content-type": "text/plain" }, "{}");
    await same("POST", check, { "content-type": "application/json" }, JSON.stringify({ resource: API, permission: "read:things", organization_id: null }));
    await same("POST", `${check}?x=1`, auth, JSON.stringify({ resource: API, permission: "read:things", organization_id: null }));
  });

  it("account-security handoff calls: answers and their own error shapes", async () => {
    const { access_token } = await humanTokens();
    const json = { "content-type": "application/json", authorization: basic(WEB.id, WEB.secret) };
    const at = (name: string) => `${issuer}/auth/account/${name}?client_id=${WEB.id}`;
    const destinations = { callback_uri: "https://web.dispatch.test/handoff", return_uri: "https://web.dispatch.test/settings" };
    const config = JSON.stringify({ ...destinations, version: 0 });
    expect((await same("POST", at("configuration"), json, JSON.stringify({ ...destinations, version: 7 }))).status).toBe(409);
    await same("POST", at("configuration"), { ...json, origin: "https://web.dispatch.test" }, config);
    await same("POST", at("configuration"), { ...json, "content-type": "text/plain" }, config);
    await same("POST", at("configuration"), { ...json, authorization: basic(WEB.id, "wrong") }, config);
    await same("POST", at("configuration"), json, JSON.stringify({ ...destinations, callback_uri: "https://evil.example/handoff", version: 0 }));
    expect((await send(ports.direct, "POST", at("configuration"), json, config)).status).toBe(200);
    const launched = await same("POST", at("launch"), json, () => JSON.stringify({ user_token: access_token, state: b64url(32) }));
    expect(launched.status, launched.body).toBe(200);
    await same("POST", at("launch"), json, JSON.stringify({ user_token: "lka_unknown", state: b64url(32) }));
    await same("POST", at("launch"), json, '{"user_token":"x","state":"a","state":"b"}');
    await same("POST", at("launch"), json, "x".repeat(3000));
    await same("POST", at("approve"), json, JSON.stringify({ user_token: access_token, challenge: b64url(32), state: b64url(32) }));
    await same("POST", `/t/no-such-workspace/auth/account/launch?client_id=${WEB.id}`, json, "{}");
  });

  it("the route table's own answers: reserved families, wrong methods, CORS preflight", async () => {
    await same("GET", `${issuer}/v1/access/anything`);
    await same("POST", `${issuer}/v1/management`, FORM, "x=1");
    await same("GET", `${issuer}/oauth2/token`);
    await same("POST", `${issuer}/oidc/session`, FORM, "");
    await same("OPTIONS", `${issuer}/oauth2/token`, { origin: SPA.origin, "access-control-request-method": "POST" });
    await same("OPTIONS", `${issuer}/oidc/userinfo`, { origin: "https://evil.example", "access-control-request-method": "GET" });
    await same("OPTIONS", `${issuer}/oauth2/introspect`, { origin: SPA.origin, "access-control-request-method": "POST" });
    // HEAD is GET without the body, on both paths.
    expect((await same("HEAD", `${issuer}/.well-known/jwks.json`)).status).toBe(200);
    expect((await same("HEAD", `${issuer}/.well-known/openid-configuration?client_id=${WEB.id}`)).status).toBe(200);
    expect((await same("HEAD", `${issuer}/oidc/session`)).status).toBe(401);
    await same("HEAD", `${issuer}/oauth2/token`);
    await same("DELETE", `${issuer}/oauth2/revoke`);
    const metadata = `/.well-known/oauth-authorization-server${issuer}`;
    expect((await same("HEAD", metadata)).status).toBe(200);
    expect((await same("OPTIONS", metadata, { origin: SPA.origin, "access-control-request-method": "GET" })).status).toBe(204);
    expect((await same("POST", metadata, FORM, "x=1")).status).toBe(405);
    await same("PUT", `${issuer}/oauth2/authorize`, FORM, "x=1");
  });
});

if (!built && !ci) {
  describe("dispatch equivalence", () => {
    it.skip("needs the production build: run `npm run build` (npm test builds first)", () => {});
  });
}
