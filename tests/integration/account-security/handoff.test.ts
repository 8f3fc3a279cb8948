/**
 * The backend handoff (SPEC.md "Account-security authentication"): configuration with its version,
 * launch, the browser's launch URL (the portal at once when the browser holds the launch's session,
 * otherwise the hosted sign-in, then the registered callback), approve, and the completion URL;
 * each limit with the injected clock, each error code, and the request rules of the JSON calls.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { accountSecurityLaunches, auditEvents, clients, users } from "../../../db/schema";
import { endHostedSession, readSessionCookie } from "../../../lib/authn/hosted-session";
import { livePortalSession, PORTAL_COOKIE, PORTAL_PATH } from "../../../lib/account-security/portal-session";
import { revokeGrantAndTokens } from "../../../lib/oauth/revoke";
import { loadTokenAuthority } from "../../../lib/oauth/authority";
import { SECOND } from "../../../lib/clock";
import { createService } from "../../../lib/service";
import { openDatabase } from "../../../db/client";
import { sha256Hex } from "../../../lib/crypto";
import { auditCatalogueMismatches } from "../../helpers/audit";
import { b64url, basic, call, createHarness, exchangeCode, Jar, PUBLIC_URL, seed, signIn, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, BOB, M2M, SPA, WEB, standardWorkspace } from "../../helpers/fixtures";
import { outcome, postPassword, postStep, workspaceContext, type PendingSignIn } from "../../helpers/factors/sign-in";
import { codeAt, giveTotp } from "../../helpers/factors/totp";

let h: Harness;
const ws = uniqueWorkspaceId("handoff");
const LOOPBACK = { client_id: "local", redirect_uri: "http://127.0.0.1:4000/callback", secret: "local-secret-0123456789abcdef0123456789abcdef" };
const OFF = { client_id: "off", redirect_uri: "https://off.example.test/callback", secret: "off-secret-0123456789abcdef0123456789abcdef" };
const CALLBACK = "https://web.example.test/account/handoff";
const RETURN = "https://web.example.test/settings?tab=security";

beforeAll(async () => {
  h = await createHarness();
  const doc = standardWorkspace(ws);
  for (const app of doc.applications) if (app.client_id === WEB.client_id) app.account_security = true;
  doc.applications.push(
    { client_id: LOOPBACK.client_id, name: "Local", type: "WEB_CONFIDENTIAL", redirect_uris: [LOOPBACK.redirect_uri], identity_scopes: ["openid"], secret: LOOPBACK.secret, account_security: true },
    { client_id: OFF.client_id, name: "Off", type: "WEB_CONFIDENTIAL", redirect_uris: [OFF.redirect_uri], identity_scopes: ["openid"], secret: OFF.secret },
  );
  await seed(h, doc);
  const res = await api("configuration", { callback_uri: CALLBACK, return_uri: RETURN, version: 0 });
  expect(res.status).toBe(200);
});

type Endpoint = "configuration" | "launch" | "approve";

interface ApiOptions {
  client?: { client_id: string; secret: string };
  headers?: Record<string, string>;
  query?: string;
  raw?: string;
}

/** A customer server's call: HTTP Basic, JSON, no Origin. */
function api(endpoint: Endpoint, body: unknown, options: ApiOptions = {}): Promise<Response> {
  const client = options.client ?? WEB;
  return call(h, `/t/${ws}/auth/account/${endpoint}${options.query ?? `?client_id=${client.client_id}`}`, {
    method: "POST",
    body: options.raw ?? JSON.stringify(body),
    headers: { authorization: basic(client.client_id, client.secret), "content-type": "application/json", ...options.headers },
  });
}

/** Signs `who` in to the web application in the browser `jar`: the user's real access token. */
async function webSignIn(jar = new Jar(), who: { email: string; password: string } = ADA, client: { client_id: string; redirect_uri: string; secret: string } = WEB): Promise<{ token: string; jar: Jar }> {
  const { callback, verifier } = await signIn(h, ws, { client_id: client.client_id, redirect_uri: client.redirect_uri, email: who.email, password: who.password, scope: "openid" }, jar);
  const res = await exchangeCode(h, ws, { code: callback.searchParams.get("code")!, redirect_uri: client.redirect_uri, verifier, authorization: basic(client.client_id, client.secret) });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { access_token: string };
  return { token: body.access_token, jar };
}

async function launch(token: string, state = b64url(32)): Promise<{ url: string; state: string; body: Record<string, unknown> }> {
  const res = await api("launch", { user_token: token, state });
  expect(res.status).toBe(200);
  const body = (await res.json()) as Record<string, unknown>;
  return { url: body.launch_url as string, state, body };
}

/** A browser GET of one of our URLs (absolute), with the jar's cookies; the jar takes the answer's. */
async function visit(url: string, jar: Jar): Promise<Response> {
  const target = new URL(url, PUBLIC_URL);
  const res = await call(h, target.pathname + target.search, { cookie: jar.header() });
  jar.take(res);
  return res;
}

const locationOf = (res: Response) => new URL(res.headers.get("location")!, PUBLIC_URL);

async function expectError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("cache-control")).toBe("no-store");
  expect(res.headers.get("referrer-policy")).toBe("no-referrer");
  const body = (await res.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(["error", "error_description"]);
  expect(body.error).toBe(code);
}

async function expectPage(res: Response, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/text\/html/);
  expect(res.headers.get("cache-control")).toBe("no-store");
  expect(res.headers.get("referrer-policy")).toBe("no-referrer");
}

async function setClient(clientId: string, values: Partial<typeof clients.$inferInsert>) {
  await h.service.db.update(clients).set(values).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, clientId)));
  h.service.cache.clear();
}

async function grantOf(token: string) {
  const authority = await loadTokenAuthority(await workspaceContext(h, ws), token);
  if (!authority || authority.kind !== "human") throw new Error("no human token");
  return authority;
}

/**
 * The callback path: the browser holds the launch's session, which the application's policy no
 * longer accepts alone (an authenticator app is now required), so the user steps it up and the
 * browser goes to the registered callback. Returns the callback's query.
 */
async function callbackPath(): Promise<{ token: string; jar: Jar; state: string; challenge: string; intent: string; callback: URL }> {
  const { token, jar } = await webSignIn();
  const { seed: totpSeed } = await giveTotp(h, ws, ADA.email);
  await setClient(WEB.client_id, { authPolicy: { mfa: "required" } });
  try {
    const { url, state } = await launch(token);
    const toSignIn = await visit(url, jar);
    expect(toSignIn.status).toBe(303);
    const signInUrl = locationOf(toSignIn);
    expect(signInUrl.pathname).toBe(`/t/${ws}/sign-in`);
    const s: PendingSignIn = { workspaceId: ws, tx: signInUrl.searchParams.get("tx")!, jar, verifier: "", state: "", nonce: "", client: { client_id: WEB.client_id, redirect_uri: WEB.redirect_uri } };
    const stepped = await postStep(h, s, "/sign-in/totp", { code: codeAt(h, totpSeed) });
    expect(stepped.status).toBe(303);
    const back = locationOf(stepped);
    expect(back.pathname).toBe(`/t/${ws}/auth/account/handoff/continue`);
    const toCallback = await visit(back.href, jar);
    expect(toCallback.status).toBe(303);
    const callback = locationOf(toCallback);
    return { token, jar, state, challenge: callback.searchParams.get("challenge")!, intent: callback.searchParams.get("intent")!, callback };
  } finally {
    await setClient(WEB.client_id, { authPolicy: {} });
  }
}

async function approve(token: string, challenge: string, state: string) {
  return api("approve", { user_token: token, challenge, state });
}

describe("configuration", () => {
  it("registers with version 0, answers the new version, and refuses a stale one", async () => {
    const fresh = { client_id: "fresh", redirect_uri: "https://fresh.example.test/cb", secret: "fresh-secret-0123456789abcdef0123456789abcdef" };
    await seed(h, { id: `${ws}-v`, name: "Versions", applications: [{ client_id: fresh.client_id, secret: fresh.secret, name: "Fresh", type: "WEB_CONFIDENTIAL", redirect_uris: [fresh.redirect_uri], identity_scopes: ["openid"] }] });
    const path = (v: number, callback = "https://fresh.example.test/handoff") =>
      call(h, `/t/${ws}-v/auth/account/configuration?client_id=fresh`, {
        method: "POST",
        body: JSON.stringify({ callback_uri: callback, return_uri: "https://fresh.example.test/settings", version: v }),
        headers: { authorization: basic(fresh.client_id, fresh.secret), "content-type": "application/json" },
      });
    await expectError(await path(1), 409, "VERSION_CONFLICT");
    const first = await path(0);
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(await first.json()).toEqual({ callback_uri: "https://fresh.example.test/handoff", return_uri: "https://fresh.example.test/settings", version: 1 });
    const stale = await path(0, "https://fresh.example.test/other");
    await expectError(stale, 409, "VERSION_CONFLICT");
    const second = await path(1, "https://fresh.example.test/other");
    expect(((await second.json()) as { version: number }).version).toBe(2);
    const [row] = await h.service.db.select().from(clients).where(and(eq(clients.workspaceId, `${ws}-v`), eq(clients.clientId, "fresh")));
    expect(row.handoffCallbackUri).toBe("https://fresh.example.test/other");
    expect(row.handoffVersion).toBe(2);
    const audited = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, `${ws}-v`), eq(auditEvents.type, "account_security.handoff_configured")));
    expect(audited).toHaveLength(2);
  });

  it("accepts only https URIs on the origin of the first registered OAuth callback; callback_uri without query or fragment", async () => {
    const version = async () => ((await h.service.db.select({ v: clients.handoffVersion }).from(clients).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, WEB.client_id))))[0].v);
    const bad = [
      { callback_uri: "https://other.example.test/handoff", return_uri: RETURN },
      { callback_uri: CALLBACK, return_uri: "https://evil.example.test/settings" },
      { callback_uri: "http://web.example.test/account/handoff", return_uri: RETURN },
      { callback_uri: `${CALLBACK}?x=1`, return_uri: RETURN },
      { callback_uri: `${CALLBACK}?`, return_uri: RETURN },
      { callback_uri: `${CALLBACK}#f`, return_uri: RETURN },
      { callback_uri: CALLBACK, return_uri: `${RETURN}#f` },
      { callback_uri: "https://user:pw@web.example.test/h", return_uri: RETURN },
      { callback_uri: "https://web.example.test:8443/h", return_uri: RETURN },
      { callback_uri: "/account/handoff", return_uri: RETURN },
      { callback_uri: "", return_uri: RETURN },
      { callback_uri: 42, return_uri: RETURN },
    ];
    for (const uris of bad) await expectError(await api("configuration", { ...uris, version: await version() }), 400, "INVALID_REQUEST");
    // A query on the return destination is fine.
    const ok = await api("configuration", { callback_uri: CALLBACK, return_uri: RETURN, version: await version() });
    expect(ok.status).toBe(200);
  });

  it("accepts loopback http for development only on the loopback callback's own origin", async () => {
    const configure = (callback: string, ret: string, version = 0) => api("configuration", { callback_uri: callback, return_uri: ret, version }, { client: LOOPBACK });
    await expectError(await configure("http://localhost:4000/handoff", "http://localhost:4000/settings"), 400, "INVALID_REQUEST");
    await expectError(await configure("https://127.0.0.1:4000/handoff", "https://127.0.0.1:4000/settings"), 400, "INVALID_REQUEST");
    await expectError(await configure("http://127.0.0.1:4001/handoff", "http://127.0.0.1:4001/settings"), 400, "INVALID_REQUEST");
    const ok = await configure("http://127.0.0.1:4000/handoff", "http://127.0.0.1:4000/settings");
    expect(ok.status).toBe(200);
  });

  it("is for WEB_CONFIDENTIAL applications with HTTP Basic only", async () => {
    await expectError(await api("configuration", { callback_uri: CALLBACK, return_uri: RETURN, version: 0 }, { client: M2M }), 403, "NOT_AVAILABLE");
    const wrong = await api("configuration", { callback_uri: CALLBACK, return_uri: RETURN, version: 0 }, { client: { client_id: WEB.client_id, secret: "wrong" } });
    await expectError(wrong, 401, "INVALID_CLIENT");
    expect(wrong.headers.get("www-authenticate")).toMatch(/^Basic /);
    // A public client (no secret) cannot authenticate at all.
    const none = await call(h, `/t/${ws}/auth/account/configuration?client_id=${SPA.client_id}`, {
      method: "POST",
      body: JSON.stringify({ callback_uri: CALLBACK, return_uri: RETURN, version: 0 }),
      headers: { "content-type": "application/json" },
    });
    await expectError(none, 401, "INVALID_CLIENT");
    await expectError(await api("configuration", { callback_uri: CALLBACK, return_uri: RETURN, version: -1 }), 400, "INVALID_REQUEST");
    await expectError(await api("configuration", { callback_uri: CALLBACK, return_uri: RETURN, version: 1.5 }), 400, "INVALID_REQUEST");
    await expectError(await api("configuration", { callback_uri: CALLBACK, return_uri: RETURN, version: "0" }), 400, "INVALID_REQUEST");
  });
});

describe("the JSON calls' request rules", () => {
  it("refuses an Origin header, another media type, a body over 2 KiB, duplicate or unknown members, and a wrong query", async () => {
    const { token } = await webSignIn();
    const body = { user_token: token, state: b64url(32) };
    await expectError(await api("launch", body, { headers: { origin: "https://web.example.test" } }), 403, "ORIGIN_REFUSED");
    await expectError(await api("launch", body, { headers: { "content-type": "application/x-www-form-urlencoded" } }), 415, "UNSUPPORTED_MEDIA_TYPE");
    await expectError(await api("launch", body, { headers: { "content-type": "text/plain" } }), 415, "UNSUPPORTED_MEDIA_TYPE");
    await expectError(await api("launch", null, { raw: JSON.stringify({ ...body, padding: "x".repeat(2100) }) }), 413, "PAYLOAD_TOO_LARGE");
    await expectError(await api("launch", null, { raw: `{"user_token":${JSON.stringify(token)},"state":"${b64url(32)}","state":"${b64url(32)}"}` }), 400, "INVALID_REQUEST");
    await expectError(await api("launch", { ...body, extra: 1 }), 400, "INVALID_REQUEST");
    await expectError(await api("launch", { user_token: token }), 400, "INVALID_REQUEST");
    await expectError(await api("launch", null, { raw: "{not json" }), 400, "INVALID_REQUEST");
    await expectError(await api("launch", null, { raw: "[]" }), 400, "INVALID_REQUEST");
    await expectError(await api("launch", body, { query: "" }), 400, "INVALID_REQUEST");
    await expectError(await api("launch", body, { query: `?client_id=${WEB.client_id}&client_id=${WEB.client_id}` }), 400, "INVALID_REQUEST");
    await expectError(await api("launch", body, { query: `?client_id=${WEB.client_id}&x=1` }), 400, "INVALID_REQUEST");
    await expectError(await api("launch", body, { query: `?client_id=${SPA.client_id}` }), 400, "INVALID_REQUEST");
    await expectError(await api("launch", { user_token: "a\u0000b", state: b64url(32) }), 400, "INVALID_REQUEST");
    // Unknown workspace: the generic 404, in the handoff's shape.
    const unknown = await call(h, `/t/no-such-ws/auth/account/launch?client_id=${WEB.client_id}`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { authorization: basic(WEB.client_id, WEB.secret), "content-type": "application/json" },
    });
    await expectError(unknown, 404, "NOT_FOUND");
  });

  it("answers 503 in its own shape when the database fails (fail closed)", async () => {
    const { token } = await webSignIn();
    // Nothing listens on port 9: every query fails to connect.
    const down = await openDatabase({ databaseUrl: "postgres://postgres@127.0.0.1:9/latchkey" });
    const broken: Harness = { ...h, service: createService(down.db, h.service.config, h.clock) };
    const res = await call(broken, `/t/${ws}/auth/account/launch?client_id=${WEB.client_id}`, {
      method: "POST",
      body: JSON.stringify({ user_token: token, state: b64url(32) }),
      headers: { authorization: basic(WEB.client_id, WEB.secret), "content-type": "application/json" },
    });
    await expectError(res, 503, "TEMPORARILY_UNAVAILABLE");
    const page = await call(broken, `/t/${ws}/auth/account/handoff?launch=${b64url(32)}`);
    expect(page.status).toBe(503);
    await down.close();
  });
});

describe("rate limits", () => {
  it("answers 429 RATE_LIMITED with Retry-After, in the handoff's shape", async () => {
    const limited = await createHarness({ rateLimits: { requestsPerMinute: 2, failuresPer5Minutes: 1000 } });
    const id = uniqueWorkspaceId("handoff-limit");
    await seed(limited, standardWorkspace(id));
    const send = () =>
      call(limited, `/t/${id}/auth/account/launch?client_id=${WEB.client_id}`, {
        method: "POST",
        body: JSON.stringify({ user_token: "x", state: b64url(32) }),
        headers: { authorization: basic(WEB.client_id, WEB.secret), "content-type": "application/json" },
      });
    const answers = [await send(), await send(), await send()];
    const last = answers[2];
    await expectError(last, 429, "RATE_LIMITED");
    expect(Number(last.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

describe("launch", () => {
  it("answers launch_url, intent and expires_at (Unix milliseconds, 120 s ahead)", async () => {
    const { token } = await webSignIn();
    const { url, body } = await launch(token);
    expect(Object.keys(body).sort()).toEqual(["expires_at", "intent", "launch_url"]);
    expect(body.intent).toBe("manage");
    expect(body.expires_at).toBe(h.clock.now().getTime() + 120 * SECOND);
    expect(url).toMatch(new RegExp(`^${PUBLIC_URL}/t/${ws}/auth/account/handoff\\?launch=[A-Za-z0-9_-]{43}$`));
    // Only the handle's hash is stored.
    const handle = new URL(url).searchParams.get("launch")!;
    const rows = await h.service.db.select().from(accountSecurityLaunches).where(eq(accountSecurityLaunches.id, sha256Hex(handle)));
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows[0])).not.toContain(handle);
  });

  it("refuses a state that is not 43–128 base64url characters, and a state used before", async () => {
    const { token } = await webSignIn();
    for (const state of [b64url(31), "a".repeat(42), "a".repeat(129), `${"a".repeat(42)}+`, `${"a".repeat(42)}=`, 12]) {
      await expectError(await api("launch", { user_token: token, state }), 400, "INVALID_REQUEST");
    }
    expect((await api("launch", { user_token: token, state: "a".repeat(128) })).status).toBe(200);
    const state = b64url(32);
    expect((await api("launch", { user_token: token, state })).status).toBe(200);
    await expectError(await api("launch", { user_token: token, state }), 400, "INVALID_HANDOFF");
  });

  it("is NOT_AVAILABLE when the application does not offer the portal or has no saved configuration", async () => {
    const { token } = await webSignIn(new Jar(), ADA, OFF);
    await expectError(await api("launch", { user_token: token, state: b64url(32) }, { client: OFF }), 403, "NOT_AVAILABLE");
    await setClient(OFF.client_id, { accountSecurity: true });
    await expectError(await api("launch", { user_token: token, state: b64url(32) }, { client: OFF }), 403, "NOT_AVAILABLE");
    await setClient(OFF.client_id, { accountSecurity: false });
    const { token: webToken } = await webSignIn();
    await setClient(WEB.client_id, { accountSecurity: false });
    await expectError(await api("launch", { user_token: webToken, state: b64url(32) }), 403, "NOT_AVAILABLE");
    await setClient(WEB.client_id, { accountSecurity: true });
    await expectError(await api("launch", { user_token: webToken, state: b64url(32) }, { client: M2M }), 403, "NOT_AVAILABLE");
  });

  it("is REAUTHENTICATION_REQUIRED when the token, its grant or its hosted session is no longer valid", async () => {
    const ctx = await workspaceContext(h, ws);
    await expectError(await api("launch", { user_token: "no-such-token", state: b64url(32) }), 401, "REAUTHENTICATION_REQUIRED");
    // Another application's token is no token of this one.
    const spa = await signIn(h, ws, { client_id: SPA.client_id, redirect_uri: SPA.redirect_uri, email: ADA.email, password: ADA.password });
    const spaToken = (await (await exchangeCode(h, ws, { code: spa.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: spa.verifier, client_id: SPA.client_id })).json()) as { access_token: string };
    await expectError(await api("launch", { user_token: spaToken.access_token, state: b64url(32) }), 401, "REAUTHENTICATION_REQUIRED");
    // Grant revoked.
    const revoked = await webSignIn();
    await revokeGrantAndTokens(ctx, (await grantOf(revoked.token)).grantId, "test");
    await expectError(await api("launch", { user_token: revoked.token, state: b64url(32) }), 401, "REAUTHENTICATION_REQUIRED");
    // Hosted session ended.
    const ended = await webSignIn();
    await endHostedSession(ctx, (await grantOf(ended.token)).sessionId, "test");
    await expectError(await api("launch", { user_token: ended.token, state: b64url(32) }), 401, "REAUTHENTICATION_REQUIRED");
    // Token expired (5 minutes).
    const expired = await webSignIn();
    h.clock.advance(5 * 60 * SECOND + 1);
    await expectError(await api("launch", { user_token: expired.token, state: b64url(32) }), 401, "REAUTHENTICATION_REQUIRED");
  });
});

describe("the launch URL", () => {
  it("opens the portal at once when the browser holds the launch's session, without the callback; once", async () => {
    const { token, jar } = await webSignIn();
    const { url } = await launch(token);
    const res = await visit(url, jar);
    expect(res.status).toBe(303);
    expect(locationOf(res).pathname).toBe(`/t/${ws}${PORTAL_PATH}`);
    expect(res.headers.getSetCookie().some((c) => c.startsWith(`${PORTAL_COOKIE}=`))).toBe(true);
    const portal = await livePortalSession(await workspaceContext(h, ws), jar.header());
    expect(portal?.grantId).toBe((await grantOf(token)).grantId);
    expect(portal?.returnUri).toBe(RETURN);
    await expectPage(await visit(url, jar), 400);
  });

  it("expires after 120 seconds", async () => {
    const { token, jar } = await webSignIn();
    const early = await launch(token);
    h.clock.advance(119 * SECOND);
    expect((await visit(early.url, jar)).status).toBe(303);
    const late = await launch(token);
    h.clock.advance(120 * SECOND);
    await expectPage(await visit(late.url, jar), 400);
  });

  it("refuses at once a browser that does not hold the launch's session (none, another user's, another of the same user's): no sign-in for nothing", async () => {
    const { token } = await webSignIn();
    const browsers: [string, Jar][] = [
      ["no session", new Jar()],
      ["another user's session", (await webSignIn(new Jar(), BOB)).jar],
      ["another session of the same user", (await webSignIn(new Jar(), ADA)).jar],
    ];
    for (const [name, other] of browsers) {
      const { url } = await launch(token);
      const res = await visit(url, other);
      expect(res.status, name).toBe(403);
      await expectPage(res, 403);
    }
    const refused = await h.service.db.select({ reason: auditEvents.reason }).from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "account_security.handoff_refused")));
    expect(refused.map((r) => r.reason)).toEqual(expect.arrayContaining(["no_session", "other_user", "other_session"]));
  });

  it("refuses an unknown or malformed handle, and a launch whose grant has ended", async () => {
    const jar = new Jar();
    await expectPage(await visit(`/t/${ws}/auth/account/handoff?launch=${b64url(32)}`, jar), 400);
    await expectPage(await visit(`/t/${ws}/auth/account/handoff?launch=x`, jar), 400);
    await expectPage(await visit(`/t/${ws}/auth/account/handoff`, jar), 400);
    const { token, jar: owner } = await webSignIn();
    const { url } = await launch(token);
    await revokeGrantAndTokens(await workspaceContext(h, ws), (await grantOf(token)).grantId, "test");
    await expectPage(await visit(url, owner), 401);
  });

  it("steps the session up when the policy asks for more, then sends the browser to callback_uri with exactly challenge, state and intent", async () => {
    const { state, challenge, intent, callback } = await callbackPath();
    expect(callback.origin + callback.pathname).toBe(CALLBACK);
    expect([...callback.searchParams.keys()].sort()).toEqual(["challenge", "intent", "state"]);
    expect(callback.searchParams.get("state")).toBe(state);
    expect(intent).toBe("manage");
    expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const [row] = await h.service.db.select().from(accountSecurityLaunches).where(eq(accountSecurityLaunches.stateHash, sha256Hex(state)));
    expect(row.challengeHash).toBe(sha256Hex(challenge));
  });
});

describe("approve and completion", () => {
  it("approves once for the same user, session and grant, and the completion URL opens the portal once", async () => {
    const { token, jar, state, challenge } = await callbackPath();
    const res = await approve(token, challenge, state);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = (await res.json()) as { completion_url: string; expires_at: number };
    expect(Object.keys(body).sort()).toEqual(["completion_url", "expires_at"]);
    expect(body.expires_at).toBe(h.clock.now().getTime() + 30 * SECOND);
    expect(body.completion_url).toMatch(new RegExp(`^${PUBLIC_URL}/t/${ws}/auth/account/complete\\?handle=[A-Za-z0-9_-]{43}$`));
    await expectError(await approve(token, challenge, state), 400, "INVALID_HANDOFF");
    // Without the browser's cookie, or with another session's, the handle does not work (and is not spent).
    await expectPage(await visit(body.completion_url, new Jar()), 400);
    const other = (await webSignIn()).jar;
    await expectPage(await visit(body.completion_url, other), 400);
    const done = await visit(body.completion_url, jar);
    expect(done.status).toBe(303);
    expect(locationOf(done).pathname).toBe(`/t/${ws}${PORTAL_PATH}`);
    const portal = await livePortalSession(await workspaceContext(h, ws), jar.header());
    expect(portal?.grantId).toBe((await grantOf(token)).grantId);
    expect(portal?.sessionId).toBe(readSessionCookie(jar.header())!.id);
    await expectPage(await visit(body.completion_url, jar), 400);
    const types = (await h.service.db.select({ type: auditEvents.type }).from(auditEvents).where(eq(auditEvents.workspaceId, ws))).map((r) => r.type);
    for (const t of ["account_security.handoff_launched", "account_security.handoff_challenged", "account_security.handoff_approved", "account_security.handoff_redeemed"]) expect(types).toContain(t);
  });

  it("refuses a wrong challenge or state, another session's token, and a launch not challenged", async () => {
    const { token, state, challenge } = await callbackPath();
    await expectError(await approve(token, b64url(32), state), 400, "INVALID_HANDOFF");
    await expectError(await approve(token, challenge, b64url(32)), 400, "INVALID_HANDOFF");
    // The same user, signed in again elsewhere: another session and grant.
    const elsewhere = await webSignIn();
    await expectError(await approve(elsewhere.token, challenge, state), 400, "INVALID_HANDOFF");
    // A launch the browser never reached has no challenge to match.
    const fresh = await launch(token);
    await expectError(await approve(token, challenge, fresh.state), 400, "INVALID_HANDOFF");
    await expectError(await approve(token, "", state), 400, "INVALID_REQUEST");
    // Still approvable by the right caller.
    expect((await approve(token, challenge, state)).status).toBe(200);
  });

  it("is refused after the launch's 120 seconds, and REAUTHENTICATION_REQUIRED once the grant has ended", async () => {
    const first = await callbackPath();
    h.clock.advance(121 * SECOND);
    await expectError(await approve(first.token, first.challenge, first.state), 400, "INVALID_HANDOFF");
    const second = await callbackPath();
    await revokeGrantAndTokens(await workspaceContext(h, ws), (await grantOf(second.token)).grantId, "test");
    await expectError(await approve(second.token, second.challenge, second.state), 401, "REAUTHENTICATION_REQUIRED");
  });

  it("the completion handle lives 30 seconds and needs the source authority still live", async () => {
    const timed = await callbackPath();
    const url = ((await (await approve(timed.token, timed.challenge, timed.state)).json()) as { completion_url: string }).completion_url;
    h.clock.advance(30 * SECOND);
    await expectPage(await visit(url, timed.jar), 400);
    const inTime = await callbackPath();
    const url2 = ((await (await approve(inTime.token, inTime.challenge, inTime.state)).json()) as { completion_url: string }).completion_url;
    h.clock.advance(29 * SECOND);
    expect((await visit(url2, inTime.jar)).status).toBe(303);
    const revoked = await callbackPath();
    const url3 = ((await (await approve(revoked.token, revoked.challenge, revoked.state)).json()) as { completion_url: string }).completion_url;
    await revokeGrantAndTokens(await workspaceContext(h, ws), (await grantOf(revoked.token)).grantId, "test");
    await expectPage(await visit(url3, revoked.jar), 401);
  });

  it("the completion handle needs the user and the application still live and offering the portal", async () => {
    const disabled = await callbackPath();
    const url = ((await (await approve(disabled.token, disabled.challenge, disabled.state)).json()) as { completion_url: string }).completion_url;
    const userId = (await grantOf(disabled.token)).userId;
    await h.service.db.update(users).set({ status: "disabled" }).where(eq(users.id, userId));
    try {
      await expectPage(await visit(url, disabled.jar), 400);
    } finally {
      await h.service.db.update(users).set({ status: "active" }).where(eq(users.id, userId));
    }
    const off = await callbackPath();
    const url2 = ((await (await approve(off.token, off.challenge, off.state)).json()) as { completion_url: string }).completion_url;
    await setClient(WEB.client_id, { accountSecurity: false });
    try {
      await expectPage(await visit(url2, off.jar), 404);
    } finally {
      await setClient(WEB.client_id, { accountSecurity: true });
    }
  });

  it("20 parallel approves of one launch: exactly one succeeds; 20 parallel redemptions of one handle: exactly one opens the portal", async () => {
    const { token, jar, state, challenge } = await callbackPath();
    const approvals = await Promise.all(Array.from({ length: 20 }, () => approve(token, challenge, state)));
    expect(approvals.filter((r) => r.status === 200)).toHaveLength(1);
    expect(approvals.filter((r) => r.status === 400)).toHaveLength(19);
    const winner = approvals.find((r) => r.status === 200)!;
    const url = ((await winner.json()) as { completion_url: string }).completion_url;
    const target = new URL(url);
    const redemptions = await Promise.all(Array.from({ length: 20 }, () => call(h, target.pathname + target.search, { cookie: `lk_session=${jar.get("lk_session")}` })));
    expect(redemptions.filter((r) => r.status === 303)).toHaveLength(1);
    expect(redemptions.filter((r) => r.status === 400)).toHaveLength(19);
  });
});

describe("the audit log", () => {
  it("holds only what the audit catalogue declares for each event written above", async () => {
    const rows = await h.service.db.select().from(auditEvents).where(eq(auditEvents.workspaceId, ws));
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.flatMap(auditCatalogueMismatches)).toEqual([]);
  });
});
