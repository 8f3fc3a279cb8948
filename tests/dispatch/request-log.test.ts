/**
 * The request log (lib/server/request-log.ts, lib/http/log.ts): every kind of credential goes
 * through the production listener (lib/server/node-server.ts) over HTTP, with the log captured,
 * and none of them may appear anywhere in it: passwords (the sign-in form, the portal's), the
 * authorization code and its PKCE verifier, state and nonce, client secrets (HTTP Basic and the
 * form), access, refresh and ID tokens (Bearer, introspection, revocation, logout), email codes,
 * authenticator codes, recovery codes, the account-security launch, sign-in transactions, CSRF
 * tokens, cookies and email addresses. Every value a request carried in its query, body,
 * Authorization or Cookie, and every token or cookie an answer handed out, is looked for.
 * Each request writes exactly one line, under the id its answer carried in X-Request-Id.
 *
 * Paths the listener hands to Next are answered by a stand-in through the route table (as in
 * tests/fuzz without a build); the helpers of tests/helpers drive the flows through `Harness.send`.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../lib/http/log";
import { nodeRequest } from "../../lib/http/node-request";
import { notFoundResponse } from "../../lib/oauth/errors";
import { createRequestListener, ISSUER_PATH_HEADERS, writeResponse, type NodeHandler } from "../../lib/server/node-server";
import { dispatch } from "../../lib/server/router";
import { ADA, API, M2M, SPA, WEB, standardWorkspace } from "../helpers/fixtures";
import { b64url, basic, call, createHarness, exchangeCode, Jar, PUBLIC_URL, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { OUTBOX, signInWithEmailCode } from "../helpers/factors/email";
import { giveTotp, signInWithTotp } from "../helpers/factors/totp";
import { giveRecoveryCodes, signInWithRecoveryCode } from "../helpers/factors/recovery-codes";
import { httpSend } from "../helpers/instances";

const plain = uniqueWorkspaceId("logged");
const mfa = uniqueWorkspaceId("logged-mfa");
const PASSWORD = "a long enough password";
const person = (name: string) => ({ email: `${name}.person@example.test`, password: PASSWORD });
/** Sent with every request: without TRUST_PROXY the log names the socket's address, never this. */
const FORWARDED = "203.0.113.9";

/** The fields a request line may have: anything else (a URL, a header, a body) fails the test. */
const LINE_FIELDS = new Set(["level", "time", "pid", "msg", "request_id", "method", "family", "workspace", "status", "duration_ms", "client", "bytes", "aborted"]);

let h: Harness;
let server: http.Server;
const logText: string[] = [];
/** The X-Request-Id of every answer, in order. */
const answered: string[] = [];
/** Every value a request or an answer carried that the log must not hold. */
const carried = new Set<string>();

/** The stand-in for Next: the route table's hosted endpoints (authorize, the sign-in forms, logout, the portal's posts). */
const standIn: NodeHandler = async (req, res) => {
  const response = (await dispatch(nodeRequest(req, PUBLIC_URL), h.service)) ?? notFoundResponse();
  await writeResponse(response, res, ISSUER_PATH_HEADERS);
};

function collectJson(value: unknown): void {
  if (typeof value === "string") carried.add(value);
  else if (Array.isArray(value)) value.forEach(collectJson);
  else if (value && typeof value === "object") Object.values(value).forEach(collectJson);
}

function collectRequest(url: URL, headers: Headers, body: Buffer | undefined): void {
  for (const value of url.searchParams.values()) carried.add(value);
  const authorization = headers.get("authorization");
  if (authorization) {
    carried.add(authorization);
    const [scheme, credentials] = authorization.split(" ");
    carried.add(credentials);
    if (scheme === "Basic") for (const part of Buffer.from(credentials, "base64").toString("utf8").split(":")) carried.add(decodeURIComponent(part));
  }
  for (const pair of (headers.get("cookie") ?? "").split(";")) if (pair.includes("=")) carried.add(pair.slice(pair.indexOf("=") + 1).trim());
  if (!body?.length) return;
  const type = headers.get("content-type") ?? "";
  if (type.startsWith("application/x-www-form-urlencoded")) for (const value of new URLSearchParams(body.toString("utf8")).values()) carried.add(value);
  else if (type.startsWith("application/json")) collectJson(JSON.parse(body.toString("utf8")));
}

function collectAnswer(headers: Headers, body: Buffer): void {
  for (const cookie of headers.getSetCookie()) carried.add(cookie.split(";")[0].slice(cookie.indexOf("=") + 1));
  const location = headers.get("location");
  if (location) for (const value of new URL(location, PUBLIC_URL).searchParams.values()) carried.add(value);
  if ((headers.get("content-type") ?? "").startsWith("application/json") && body.length) {
    const json = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
    for (const key of ["access_token", "refresh_token", "id_token", "launch_url"]) if (typeof json[key] === "string") carried.add(json[key]);
  }
}

/** `Harness.send`: the request over HTTP to the listener, as a browser or an application sends it, from one client address. */
async function send(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  collectRequest(url, request.headers, body);
  const headers = new Headers(request.headers);
  if (!headers.has("x-forwarded-for")) headers.set("x-forwarded-for", FORWARDED);
  const answer = await httpSend((server.address() as AddressInfo).port)(new Request(url, { method: request.method, headers, body }));
  answered.push(answer.headers.get("x-request-id")!);
  collectAnswer(answer.headers, Buffer.from(await answer.clone().arrayBuffer()));
  return answer;
}

beforeAll(async () => {
  h = await createHarness({ mail: OUTBOX });
  for (const [id, policy] of [
    [plain, undefined],
    [mfa, { mfa: "required" }],
  ] as const) {
    const doc = standardWorkspace(id);
    for (const app of doc.applications) if (app.client_id === WEB.client_id) app.account_security = true;
    doc.users.push(...["otp", "totp", "recovery"].map((n) => ({ ...person(n), name: n, email_verified: true })));
    await seed(h, policy ? { ...doc, auth_policy: policy } : doc);
  }
  const log = createLogger({ format: "json", level: "info" }, { write: (text: string) => void logText.push(text) });
  server = http.createServer(createRequestListener(h.service, PUBLIC_URL, standIn, { log }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  h.send = send;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Waits until the listener has written a line for every answer (it writes once the answer is done). */
async function settled(): Promise<void> {
  for (let i = 0; i < 200 && logText.length < answered.length; i++) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe("the request log", () => {
  it("holds none of the credentials the requests carried, and one line per request under its X-Request-Id", async () => {
    // Password sign-in, the code exchanged with its PKCE verifier and the client's secret (HTTP Basic).
    const web = await signIn(h, plain, { ...WEB, ...ADA, scope: "openid email profile" });
    const exchanged = await exchangeCode(h, plain, { code: web.callback.searchParams.get("code")!, redirect_uri: WEB.redirect_uri, verifier: web.verifier, authorization: basic(WEB.client_id, WEB.secret) });
    expect(exchanged.status, await exchanged.clone().text()).toBe(200);
    const tokens = (await exchanged.json()) as { access_token: string; refresh_token: string; id_token: string };
    // A public client's exchange (PKCE alone).
    const spa = await signIn(h, plain, { ...SPA, ...ADA });
    expect((await exchangeCode(h, plain, { code: spa.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: spa.verifier, client_id: SPA.client_id })).status).toBe(200);
    // The access token as a Bearer token.
    for (const path of ["/oidc/userinfo", "/oidc/session"]) expect((await call(h, `/t/${plain}${path}`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200);
    // Introspection, refresh, a client secret in the form (refused, but sent), revocation.
    const asWeb = { authorization: basic(WEB.client_id, WEB.secret) };
    expect((await call(h, `/t/${plain}/oauth2/introspect`, { form: { token: tokens.access_token }, headers: asWeb })).status).toBe(200);
    const refreshed = await call(h, `/t/${plain}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: tokens.refresh_token }, headers: asWeb });
    expect(refreshed.status).toBe(200);
    const rotated = ((await refreshed.json()) as { refresh_token: string }).refresh_token;
    await call(h, `/t/${plain}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: rotated, client_id: WEB.client_id, client_secret: WEB.secret } });
    // The workload's secret and token, and a permission check with it.
    const m2m = await call(h, `/t/${plain}/oauth2/token`, { form: { grant_type: "client_credentials", resource: API, scope: "read:things" }, headers: { authorization: basic(M2M.client_id, M2M.secret) } });
    expect(m2m.status).toBe(200);
    const workload = ((await m2m.json()) as { access_token: string }).access_token;
    await call(h, `/t/${plain}/authorization/check`, { method: "POST", body: JSON.stringify({ audience: API, permission: "read:things" }), headers: { authorization: `Bearer ${workload}`, "content-type": "application/json" } });
    // The account-security handoff: configuration, launch with the user's token, the browser's launch URL; the portal's password form.
    const configured = await call(h, `/t/${plain}/auth/account/configuration?client_id=${WEB.client_id}`, {
      method: "POST",
      body: JSON.stringify({ callback_uri: "https://web.example.test/account/handoff", return_uri: "https://web.example.test/settings", version: 0 }),
      headers: { ...asWeb, "content-type": "application/json" },
    });
    expect(configured.status).toBe(200);
    const launched = await call(h, `/t/${plain}/auth/account/launch?client_id=${WEB.client_id}`, {
      method: "POST",
      body: JSON.stringify({ user_token: tokens.access_token, state: b64url(32) }),
      headers: { ...asWeb, "content-type": "application/json" },
    });
    expect(launched.status).toBe(200);
    const launchUrl = new URL(((await launched.json()) as { launch_url: string }).launch_url);
    const entered = await call(h, launchUrl.pathname + launchUrl.search, { cookie: web.jar.header() });
    expect(entered.status).toBe(303);
    web.jar.take(entered);
    await call(h, `/t/${plain}/account/verify/password`, { form: { csrf: "not-the-page-token", password: ADA.password }, cookie: web.jar.header(), headers: { origin: PUBLIC_URL } });
    // Revocation, and logout with the ID token.
    expect((await call(h, `/t/${plain}/oauth2/revoke`, { form: { token: rotated }, headers: asWeb })).status).toBe(200);
    await call(h, `/t/${plain}/oidc/logout?${new URLSearchParams({ id_token_hint: tokens.id_token, post_logout_redirect_uri: "https://web.example.test/signed-out" })}`, { cookie: web.jar.header() });
    // An email code, an authenticator app's code, a recovery code.
    expect((await signInWithEmailCode(h, plain, { ...SPA, email: person("otp").email })).callback).not.toBeNull();
    const { seed: totpSeed } = await giveTotp(h, mfa, person("totp").email);
    await signInWithTotp(h, mfa, { ...SPA, ...person("totp"), seed: totpSeed });
    await giveTotp(h, mfa, person("recovery").email);
    const [recoveryCode] = await giveRecoveryCodes(h, mfa, person("recovery").email);
    await signInWithRecoveryCode(h, mfa, { ...SPA, ...person("recovery"), code: recoveryCode });
    // A wrong password too.
    await call(h, `/t/${plain}/sign-in/password`, { form: { tx: "no-such-transaction", csrf: "x", email: ADA.email, password: "not Ada's password at all" }, headers: { origin: PUBLIC_URL } });
    await settled();

    // The collection itself took hold of what it should have.
    for (const value of [ADA.password, PASSWORD, WEB.secret, M2M.secret, tokens.access_token, tokens.refresh_token, tokens.id_token, rotated, workload, recoveryCode, ADA.email, person("otp").email, launchUrl.href, web.verifier]) {
      expect(carried.has(value), value).toBe(true);
    }
    const text = logText.join("");
    const workspaces = new Set([plain, mfa]);
    // Short values (methods, client ids, numbers) would match by chance; each 6-digit code is looked for as a whole number.
    const leaked = [...carried].filter((value) => !workspaces.has(value) && (/^\d{6}$/.test(value) ? new RegExp(`(?<![0-9A-Za-z])${value}(?![0-9A-Za-z])`).test(text) : value.length >= 8 && text.includes(value)));
    expect(leaked).toEqual([]);
    const codes = [...carried].filter((value) => /^\d{6}$/.test(value));
    expect(codes.length).toBeGreaterThanOrEqual(2); // the email code and the authenticator code
    // No address at all, not even a domain's.
    expect(text).not.toContain("@");
    expect(text).not.toContain("example.test");

    // One line per request, under the id its answer carried; nothing else.
    const lines = text.trimEnd().split("\n");
    expect(lines).toHaveLength(answered.length);
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const record of records) {
      expect(Object.keys(record).filter((key) => !LINE_FIELDS.has(key))).toEqual([]);
      expect(record).toMatchObject({ level: "info", msg: "request", client: "127.0.0.1" });
      expect(workspaces.has(record.workspace as string)).toBe(true);
    }
    for (const id of answered) expect(records.filter((r) => r.request_id === id)).toHaveLength(1);
    const families = new Set(records.map((r) => r.family));
    for (const family of ["authorize", "sign_in", "token", "userinfo", "session_check", "introspect", "revoke", "logout", "authorization_check", "handoff", "portal"]) expect(families).toContain(family);
  });

  it("names each request by an id of its own, even when clients send the same X-Request-Id, or another answer's", async () => {
    const before = logText.length;
    const from = answered.length;
    for (const sent of ["dup-1", "dup-1", "dup-1", answered[0]]) {
      expect((await call(h, `/t/${plain}/.well-known/openid-configuration`, { headers: { "x-request-id": sent } })).status).toBe(200);
    }
    await settled();
    const ids = logText.slice(before).map((line) => (JSON.parse(line) as { request_id: string }).request_id);
    expect(ids).toEqual(answered.slice(from));
    expect(new Set(ids).size).toBe(4);
    for (const id of ids.slice(0, 3)) expect(id.startsWith("dup-1~")).toBe(true);
    expect(ids.every((id) => !answered.slice(0, from).includes(id))).toBe(true);
  });
});
