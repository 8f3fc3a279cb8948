/**
 * A small customer application that signs its users in with Latchkey, using openid-client.
 * The e2e suite drives it; it is also the integration example the docs point to.
 *
 *   GET  /start     new transaction (state, nonce, PKCE verifier) held server-side, bound to an
 *                   HttpOnly cookie; redirect to the authorize endpoint
 *   GET  /callback  consume the transaction once, exchange the code (openid-client checks
 *                   state, iss, PKCE, and the ID token's signature, issuer, audience, expiry
 *                   and nonce), fetch UserInfo, start a new application session
 *   GET  /profile   protected page: checks current authority with the online session check
 *   POST /logout    end the local session, then hosted logout back to /signed-out
 *
 * Token lifecycle, through openid-client (JSON answers; the e2e suite calls them from the page):
 *   POST /lifecycle/refresh     refresh grant; the stored token pair is replaced atomically, and
 *                               any failure ends the local session (no blind retry)
 *   POST /lifecycle/introspect  own-token introspection of the stored access and refresh tokens
 *   POST /lifecycle/revoke      revoke the stored refresh token (ends the whole grant)
 *   POST /lifecycle/logout      end the local session, hosted logout via buildEndSessionUrl; the
 *                               tokens are revoked when the browser is back on /signed-out
 *                               (revocation AFTER hosted logout: logout needs the live grant)
 *
 * The account-security handoff (SPEC.md's customer backend routes; docs/account-security.md):
 *   POST /account-security/start     signed-in user + CSRF proof; pending record (120 s) under a
 *                                    random state; launch; 303 to launch_url
 *   GET  /account-security/callback  the registered handoff callback: challenge, state and intent
 *                                    checked against the pending record and the same dashboard
 *                                    session, the record consumed once; approve; 303 to completion_url
 *   GET  /settings/security          the registered return destination: an ordinary settings page
 * The handoff destinations are registered once, before the first launch (configuration, with the
 * version the service returns kept for the next change; HANDOFF_VERSION is the starting value).
 *
 * Run: npx tsx e2e/customer-app.ts (expects Latchkey on http://localhost:3111 with the
 * e2e/fixtures/e2e-workspace.json workspace). Sessions live in memory: a real application
 * keeps them in its own store.
 *
 * Environment: LATCHKEY_ISSUER, CLIENT_ID, CLIENT_SECRET, PORT; RESOLVE (`name=address,…`) maps
 * names no DNS knows, such as a workspace hostname tried on this machine
 * (`RESOLVE=login.acme.test=127.0.0.1`), for every request the app makes (e2e/resolving-fetch.ts).
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import http from "node:http";
import * as client from "openid-client";
import { isLoopbackName, parseResolve, resolvingFetch } from "./resolving-fetch";

const ISSUER = process.env.LATCHKEY_ISSUER ?? "http://localhost:3111/t/e2e";
const CLIENT_ID = process.env.CLIENT_ID ?? "e2e-web";
const CLIENT_SECRET = process.env.CLIENT_SECRET ?? "e2e-web-secret-0123456789abcdef0123456789";
const PORT = Number(process.env.PORT ?? 3112);
const ORIGIN = `http://localhost:${PORT}`;
const REDIRECT_URI = `${ORIGIN}/callback`;
const SIGNED_OUT_URI = `${ORIGIN}/signed-out`;
const TRANSACTION_TTL_MS = 10 * 60_000;
const RESOLVE = parseResolve(process.env.RESOLVE ?? "");
// With RESOLVE, every request the app makes goes through the mapping, openid-client's included
// (it calls the global fetch); without it, fetch is Node's own.
if (RESOLVE.size > 0) globalThis.fetch = resolvingFetch(RESOLVE) as typeof fetch;

interface Transaction {
  state: string;
  nonce: string;
  codeVerifier: string;
  expiresAt: number;
}

interface AppSession {
  // The user's real tokens, bound to this dashboard session, the user, the issuer and the client.
  iss: string;
  clientId: string;
  sub: string;
  accessToken: string;
  accessTokenExpiresAt: number;
  refreshToken?: string;
  /** The CSRF proof of this session's form POSTs. */
  csrfToken: string;
  idToken: { header: unknown; claims: client.IDToken };
  userinfo: client.UserInfoResponse;
}

const transactions = new Map<string, Transaction>();
const sessions = new Map<string, AppSession>();

// Discovery runs on first use, so the app can start before Latchkey does.
let configuration: Promise<client.Configuration> | undefined;
function config(): Promise<client.Configuration> {
  const issuer = new URL(ISSUER);
  const loopback = isLoopbackName(issuer.hostname, RESOLVE);
  configuration ??= client
    .discovery(issuer, CLIENT_ID, { id_token_signed_response_alg: "ES256" }, client.ClientSecretBasic(CLIENT_SECRET), {
      // Verify ID token signatures against the issuer's JWKS; allow plain http on loopback only.
      execute: [client.enableNonRepudiationChecks, ...(issuer.protocol === "http:" && loopback ? [client.allowInsecureRequests] : [])],
    })
    .catch((error: unknown) => {
      configuration = undefined;
      throw error;
    });
  return configuration;
}

async function start(res: http.ServerResponse): Promise<void> {
  const transaction: Transaction = {
    state: client.randomState(),
    nonce: client.randomNonce(),
    codeVerifier: client.randomPKCECodeVerifier(),
    expiresAt: Date.now() + TRANSACTION_TTL_MS,
  };
  const id = randomId();
  transactions.set(id, transaction);
  const url = client.buildAuthorizationUrl(await config(), {
    redirect_uri: REDIRECT_URI,
    scope: "openid email profile",
    state: transaction.state,
    nonce: transaction.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(transaction.codeVerifier),
    code_challenge_method: "S256",
  });
  res.setHeader("Set-Cookie", cookie("app_tx", id, TRANSACTION_TTL_MS / 1000));
  redirect(res, url.href);
}

async function callback(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  // Consume the transaction before anything can fail, so it is used at most once.
  const id = readCookie(req, "app_tx");
  const transaction = id ? transactions.get(id) : undefined;
  if (id) transactions.delete(id);
  res.setHeader("Set-Cookie", cookie("app_tx", "", 0));
  if (!transaction || transaction.expiresAt < Date.now()) {
    return page(res, 400, "Sign-in expired", `<p>Please <a href="/start">start again</a>.</p>`);
  }

  const currentUrl = new URL(req.url ?? "/", ORIGIN);
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    tokens = await client.authorizationCodeGrant(await config(), currentUrl, {
      pkceCodeVerifier: transaction.codeVerifier,
      expectedState: transaction.state,
      expectedNonce: transaction.nonce,
      idTokenExpected: true,
    });
  } catch (error) {
    return page(res, 400, "Sign-in failed", `<p role="alert">${escape(describe(error))}</p><p><a href="/start">Try again</a></p>`);
  }
  const claims = tokens.claims();
  if (!claims || !tokens.id_token) return page(res, 400, "Sign-in failed", "<p>No ID token.</p>");
  // Throws unless UserInfo's sub equals the ID token's.
  const userinfo = await client.fetchUserInfo(await config(), tokens.access_token, claims.sub);

  // A new application session keyed by (iss, sub); never by email.
  const sessionId = randomId();
  sessions.set(sessionId, {
    iss: claims.iss,
    clientId: CLIENT_ID,
    sub: claims.sub,
    accessToken: tokens.access_token,
    accessTokenExpiresAt: expiresAt(tokens),
    refreshToken: tokens.refresh_token,
    csrfToken: randomId(),
    idToken: { header: decodeHeader(tokens.id_token), claims },
    userinfo,
  });
  res.setHeader("Set-Cookie", [cookie("app_tx", "", 0), cookie("app_session", sessionId, 12 * 3600)]);
  redirect(res, "/profile");
}

/** Online session check: access only with 200, active === true, and matching iss, client, sub, exp. */
async function checkSession(session: Pick<AppSession, "accessToken" | "sub">): Promise<{ ok: boolean; status: number; body: unknown }> {
  try {
    const response = await fetch(`${ISSUER}/oidc/session`, {
      headers: { authorization: `Bearer ${session.accessToken}` },
      redirect: "manual",
      cache: "no-store",
    });
    const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
    const ok =
      response.status === 200 &&
      body?.active === true &&
      body.iss === ISSUER &&
      body.client_id === CLIENT_ID &&
      body.sub === session.sub &&
      typeof body.exp === "number" &&
      body.exp * 1000 > Date.now();
    return { ok, status: response.status, body };
  } catch {
    return { ok: false, status: 503, body: null }; // authority unconfirmed: deny
  }
}

/** The dashboard session of this request, if the online session check confirms it; otherwise answers and returns null. */
async function activeSession(
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<{ id: string; session: AppSession; check: Awaited<ReturnType<typeof checkSession>> } | null> {
  const id = readCookie(req, "app_session");
  const session = id ? sessions.get(id) : undefined;
  if (!id || !session) {
    redirect(res, "/start");
    return null;
  }
  const check = await checkSession(session);
  if (!check.ok) {
    sessions.delete(id);
    res.setHeader("Set-Cookie", cookie("app_session", "", 0));
    page(res, 401, "Session ended", `<p>Your session has ended. <a href="/start">Sign in again</a>.</p>`);
    return null;
  }
  return { id, session, check };
}

async function profile(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const current = await activeSession(req, res);
  if (!current) return;
  const { session, check } = current;
  const result = { id_token: session.idToken, userinfo: session.userinfo, session_check: check.body };
  page(
    res,
    200,
    `Signed in as ${session.userinfo.name ?? session.userinfo.email ?? session.sub}`,
    `<pre data-testid="result">${escape(JSON.stringify(result, null, 2))}</pre>
     ${securityControls(session)}
     <form method="post" action="/logout"><button>Sign out</button></form>`,
  );
}

async function logout(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  // CSRF: SameSite=Lax session cookie, and the POST must come from our own pages. Our pages send
  // Referrer-Policy: no-referrer, so browsers send `Origin: null`; Sec-Fetch-Site still says.
  const sameOrigin = req.headers.origin === ORIGIN || req.headers["sec-fetch-site"] === "same-origin";
  if (!sameOrigin) return page(res, 403, "Forbidden", "");
  const id = readCookie(req, "app_session");
  if (id) sessions.delete(id);
  res.setHeader("Set-Cookie", cookie("app_session", "", 0));
  // Hosted logout needs the grant, so it runs before (instead of) revocation.
  const url = new URL(`${ISSUER}/oidc/logout`);
  url.searchParams.set("client_id", CLIENT_ID);
  url.searchParams.set("post_logout_redirect_uri", SIGNED_OUT_URI);
  redirect(res, url.href);
}

// --- token lifecycle (openid-client) ---

/** Tokens of sessions that went to hosted logout, revoked when the browser returns to /signed-out. */
const signingOut = new Map<string, { sub: string; accessToken: string; refreshToken?: string; expiresAt: number }>();

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(body));
}

/** CSRF, as on /logout: the POST comes from our own pages (Origin, or Sec-Fetch-Site under no-referrer). */
function fromOwnPages(req: http.IncomingMessage): boolean {
  return req.headers.origin === ORIGIN || req.headers["sec-fetch-site"] === "same-origin";
}

/** The signed-in session of a POST from our own pages, or null after answering. */
function lifecycleSession(req: http.IncomingMessage, res: http.ServerResponse): { id: string; session: AppSession } | null {
  if (!fromOwnPages(req)) {
    json(res, 403, { error: "forbidden" });
    return null;
  }
  const id = readCookie(req, "app_session");
  const session = id ? sessions.get(id) : undefined;
  if (!id || !session) {
    json(res, 401, { error: "not_signed_in" });
    return null;
  }
  return { id, session };
}

async function lifecycleRefresh(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const current = lifecycleSession(req, res);
  if (!current) return;
  const { id, session } = current;
  if (!session.refreshToken) return json(res, 409, { error: "no_refresh_token" });
  let tokens: Awaited<ReturnType<typeof client.refreshTokenGrant>>;
  try {
    tokens = await client.refreshTokenGrant(await config(), session.refreshToken);
  } catch (error) {
    // Rejected, or the response was lost after the server may have rotated the token: either way
    // the stored token is unusable. End the local session; the user signs in again. No retry.
    sessions.delete(id);
    return json(res, 401, { error: "refresh_failed", detail: describe(error) });
  }
  // Replace the pair in one assignment: never a new access token with the old refresh token.
  const previous = session.refreshToken;
  sessions.set(id, {
    ...session,
    accessToken: tokens.access_token,
    accessTokenExpiresAt: expiresAt(tokens),
    refreshToken: tokens.refresh_token ?? session.refreshToken,
  });
  const check = await checkSession(sessions.get(id)!);
  json(res, 200, {
    token_type: tokens.token_type,
    expires_in: tokens.expires_in,
    scope: tokens.scope,
    id_token: tokens.id_token !== undefined,
    refresh_token_rotated: tokens.refresh_token !== undefined && tokens.refresh_token !== previous,
    access_token_changed: tokens.access_token !== session.accessToken,
    session_check: check.body,
  });
}

async function lifecycleIntrospect(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const current = lifecycleSession(req, res);
  if (!current) return;
  const { session } = current;
  const cfg = await config();
  json(res, 200, {
    sub: session.sub,
    access_token: await client.tokenIntrospection(cfg, session.accessToken, { token_type_hint: "access_token" }),
    refresh_token: session.refreshToken ? await client.tokenIntrospection(cfg, session.refreshToken, { token_type_hint: "refresh_token" }) : null,
  });
}

async function lifecycleRevoke(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const current = lifecycleSession(req, res);
  if (!current) return;
  const { session } = current;
  if (!session.refreshToken) return json(res, 409, { error: "no_refresh_token" });
  // Revoking the refresh token ends the whole grant: its access tokens stop working too.
  await client.tokenRevocation(await config(), session.refreshToken, { token_type_hint: "refresh_token" });
  const check = await checkSession(session);
  json(res, 200, { revoked: true, session_check: { status: check.status, ok: check.ok } });
}

async function lifecycleLogout(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  if (!fromOwnPages(req)) return page(res, 403, "Forbidden", "");
  const id = readCookie(req, "app_session");
  const session = id ? sessions.get(id) : undefined;
  const cookies = [cookie("app_session", "", 0)];
  if (id) sessions.delete(id);
  if (session) {
    const handle = randomId();
    signingOut.set(handle, { sub: session.sub, accessToken: session.accessToken, refreshToken: session.refreshToken, expiresAt: Date.now() + 10 * 60_000 });
    cookies.push(cookie("app_signout", handle, 600));
  }
  res.setHeader("Set-Cookie", cookies);
  // openid-client adds client_id; nothing else (no id_token_hint, no state) is sent.
  redirect(res, client.buildEndSessionUrl(await config(), { post_logout_redirect_uri: SIGNED_OUT_URI }).href);
}

async function signedOut(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const handle = readCookie(req, "app_signout");
  const pending = handle ? signingOut.get(handle) : undefined;
  if (handle) signingOut.delete(handle);
  let result = "";
  if (pending && pending.expiresAt > Date.now()) {
    res.setHeader("Set-Cookie", cookie("app_signout", "", 0));
    const cfg = await config();
    // Hosted logout already ended the grant's authority; confirm, then revoke for good measure.
    const check = await checkSession(pending);
    const afterLogout = {
      access_token: await client.tokenIntrospection(cfg, pending.accessToken),
      refresh_token: pending.refreshToken ? await client.tokenIntrospection(cfg, pending.refreshToken) : null,
      session_check: { status: check.status, ok: check.ok },
    };
    let revoked = false;
    if (pending.refreshToken) {
      await client.tokenRevocation(cfg, pending.refreshToken);
      revoked = true;
    }
    result = `<pre data-testid="sign-out-result">${escape(JSON.stringify({ after_logout: afterLogout, revoked }))}</pre>`;
  }
  page(res, 200, "Signed out", `<p>You are signed out. <a href="/start">Sign in</a></p>${result}`);
}

// --- the account-security handoff (SPEC.md: customer backend routes in the handoff) ---

const HANDOFF_CALLBACK_URI = `${ORIGIN}/account-security/callback`;
const HANDOFF_RETURN_URI = `${ORIGIN}/settings/security`;
const LAUNCH_TTL_MS = 120_000;
/** The direct link: the portal, entered from the browser without the handoff. */
const DIRECT_LINK = `${ISSUER}/auth/account?client_id=${encodeURIComponent(CLIENT_ID)}`;

/** SPEC.md's pending launch record, held server-side under the launch's random state. */
interface PendingLaunch {
  sessionId: string;
  userId: string;
  intent: string | null; // known once launch has answered
  expiresAt: number; // Unix milliseconds
}

const pendingLaunches = new Map<string, PendingLaunch>();

/**
 * Takes the pending record of `state` if it was made for this dashboard session: one atomic step
 * (in a shared store: `DELETE ... WHERE state_key = $1 AND session_id = $2 RETURNING *`, or
 * GETDEL plus a check), so a record is consumed at most once.
 */
function takePendingLaunch(state: string, sessionId: string): PendingLaunch | undefined {
  const pending = pendingLaunches.get(state);
  if (!pending || pending.sessionId !== sessionId) return undefined;
  pendingLaunches.delete(state);
  return pending;
}

function forgetExpiredLaunches(now: number): void {
  for (const [state, pending] of pendingLaunches) if (pending.expiresAt <= now) pendingLaunches.delete(state);
}

type HandoffAnswer = { ok: true; body: Record<string, unknown> } | { ok: false; status: number; code: string | null };

/**
 * One handoff call: HTTP Basic, a JSON body, no Origin header (a server-side fetch sends none),
 * and manual redirect handling. A 3xx is an error: its body is not read and its Location is never
 * followed. The status is checked before the body is parsed.
 */
async function handoffCall(endpoint: "configuration" | "launch" | "approve", body: Record<string, unknown>): Promise<HandoffAnswer> {
  const url = new URL(`${ISSUER}/auth/account/${endpoint}`);
  url.searchParams.set("client_id", CLIENT_ID);
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { authorization: basicAuthorization(), "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
      redirect: "manual",
      cache: "no-store",
    });
  } catch {
    return { ok: false, status: 503, code: null }; // unreachable: nothing was approved
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel();
    return { ok: false, status: response.status, code: null };
  }
  const answer: unknown = await response.json().catch(() => null);
  if (!response.ok || !isRecord(answer)) return { ok: false, status: response.status, code: errorCode(answer) };
  return { ok: true, body: answer };
}

/** The client's Basic credentials: base64 of formEncode(client_id) ":" formEncode(client_secret). */
function basicAuthorization(): string {
  const formEncode = (value: string) => new URLSearchParams([["", value]]).toString().slice(1);
  return `Basic ${Buffer.from(`${formEncode(CLIENT_ID)}:${formEncode(CLIENT_SECRET)}`).toString("base64")}`;
}

/** The handoff configuration's version the service last returned; a real application persists it. */
let handoffVersion = Number(process.env.HANDOFF_VERSION ?? 0);
let handoffRegistration: Promise<void> | undefined;

/**
 * Registers the callback and return destinations once, before the first launch. A refused
 * registration (for example a stale version: someone registered since) is logged and not retried;
 * the launch then says whether a saved configuration exists (NOT_AVAILABLE when none).
 */
function registerHandoff(): Promise<void> {
  handoffRegistration ??= (async () => {
    const answer = await handoffCall("configuration", { callback_uri: HANDOFF_CALLBACK_URI, return_uri: HANDOFF_RETURN_URI, version: handoffVersion });
    if (answer.ok && typeof answer.body.version === "number") {
      handoffVersion = answer.body.version;
      return;
    }
    if (!answer.ok && (answer.status >= 500 || answer.status >= 300 && answer.status < 400)) handoffRegistration = undefined; // try again next time
    console.error(`handoff configuration refused: ${answer.ok ? "no version in the answer" : `${answer.status} ${answer.code ?? ""}`}`);
  })();
  return handoffRegistration;
}

/**
 * The user's real access token for this dashboard session, only when the session is bound to
 * this user, issuer and client; refreshed first when it is about to expire. Never an ID token,
 * an email address or a token hash in its place.
 */
async function userToken(sessionId: string, userId: string): Promise<string | null> {
  const session = sessions.get(sessionId);
  if (!session || session.sub !== userId || session.iss !== ISSUER || session.clientId !== CLIENT_ID) return null;
  if (session.accessTokenExpiresAt - Date.now() > 30_000) return session.accessToken;
  if (!session.refreshToken) return null;
  let tokens: Awaited<ReturnType<typeof client.refreshTokenGrant>>;
  try {
    tokens = await client.refreshTokenGrant(await config(), session.refreshToken);
  } catch {
    sessions.delete(sessionId); // the stored token is unusable: the user signs in again
    return null;
  }
  sessions.set(sessionId, {
    ...session,
    accessToken: tokens.access_token,
    accessTokenExpiresAt: expiresAt(tokens),
    refreshToken: tokens.refresh_token ?? session.refreshToken,
  });
  return tokens.access_token;
}

/** POST /account-security/start: the dashboard's "Security settings" button. */
async function accountSecurityStart(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  if (!fromOwnPages(req)) return page(res, 403, "Forbidden", "");
  const id = readCookie(req, "app_session");
  const session = id ? sessions.get(id) : undefined;
  if (!id || !session) return redirect(res, "/start");
  const form = await readForm(req);
  if (!form || !sameSecret(form.get("csrf"), session.csrfToken)) return page(res, 403, "Forbidden", "");

  const token = await userToken(id, session.sub);
  if (!token) return signInAgain(res, id);
  await registerHandoff();

  // One state per launch: 32 random bytes, base64url (43 characters).
  const state = randomBytes(32).toString("base64url");
  const now = Date.now();
  forgetExpiredLaunches(now);
  pendingLaunches.set(state, { sessionId: id, userId: session.sub, intent: null, expiresAt: now + LAUNCH_TTL_MS });

  const launch = await handoffCall("launch", { user_token: token, state });
  if (!launch.ok) {
    pendingLaunches.delete(state);
    if (launch.code === "REAUTHENTICATION_REQUIRED") return signInAgain(res, id);
    return handoffFailed(res, launch.code === "NOT_AVAILABLE" ? "Security settings are not available for this application." : undefined);
  }
  const { launch_url, intent } = launch.body;
  const launchExpiresAt = expiryTime(launch.body.expires_at);
  if (typeof launch_url !== "string" || !launch_url.startsWith(`${ISSUER}/`) || typeof intent !== "string" || launchExpiresAt === null) {
    pendingLaunches.delete(state);
    return handoffFailed(res);
  }
  pendingLaunches.set(state, { sessionId: id, userId: session.sub, intent, expiresAt: Math.min(now + LAUNCH_TTL_MS, launchExpiresAt) });
  redirect(res, launch_url);
}

/** GET /account-security/callback: the registered handoff callback. */
async function accountSecurityCallback(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const query = exactQuery(new URL(req.url ?? "/", ORIGIN).searchParams, ["challenge", "state", "intent"]);
  const id = readCookie(req, "app_session");
  const session = id ? sessions.get(id) : undefined;
  if (!query || !id || !session) return handoffFailed(res);

  // Consumed first, once, and only by the dashboard session that started the launch.
  const pending = takePendingLaunch(query.state, id);
  if (!pending || pending.userId !== session.sub || pending.intent !== query.intent || pending.expiresAt <= Date.now()) {
    return handoffFailed(res);
  }

  const token = await userToken(id, pending.userId);
  if (!token) return signInAgain(res, id);
  const approval = await handoffCall("approve", { user_token: token, challenge: query.challenge, state: query.state });
  if (!approval.ok) {
    if (approval.code === "REAUTHENTICATION_REQUIRED") return signInAgain(res, id);
    return handoffFailed(res);
  }
  const { completion_url } = approval.body;
  if (typeof completion_url !== "string" || !completion_url.startsWith(`${ISSUER}/`)) return handoffFailed(res);
  redirect(res, completion_url);
}

/** GET /settings/security: the registered return destination, an ordinary dashboard settings page. */
async function securitySettings(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const current = await activeSession(req, res);
  if (!current) return;
  const { session } = current;
  page(
    res,
    200,
    "Account settings",
    `<p data-testid="settings-user">${escape(session.userinfo.email ?? session.sub)}</p>
     ${securityControls(session)}
     <p><a href="/profile">Back to your profile</a></p>`,
  );
}

/** The "Security settings" button (the handoff, with this session's CSRF proof) and the direct link. */
function securityControls(session: AppSession): string {
  return `<form method="post" action="/account-security/start">
       <input type="hidden" name="csrf" value="${escape(session.csrfToken)}">
       <button>Security settings</button>
     </form>
     <p><a href="${escape(DIRECT_LINK)}">Security settings (direct link)</a></p>`;
}

/** The server-held token is no longer accepted: end the local session; the user signs in again. */
function signInAgain(res: http.ServerResponse, sessionId: string): void {
  sessions.delete(sessionId);
  res.setHeader("Set-Cookie", cookie("app_session", "", 0));
  page(res, 401, "Please sign in again", `<p>Your session needs to be renewed. <a href="/start">Sign in again</a>.</p>`);
}

function handoffFailed(res: http.ServerResponse, message = "The security settings could not be opened."): void {
  page(res, 400, "Security settings", `<p role="alert">${escape(message)}</p><p><a href="/settings/security">Back to settings</a></p>`);
}

const server = http.createServer((req, res) => {
  const { pathname } = new URL(req.url ?? "/", ORIGIN);
  const route = `${req.method} ${pathname}`;
  const handle = async () => {
    switch (route) {
      case "GET /health":
        return void res.end("ok");
      case "GET /":
        return page(res, 200, "Example app", `<p><a href="/start">Sign in</a></p>`);
      case "GET /start":
        return start(res);
      case "GET /callback":
        return callback(req, res);
      case "GET /profile":
        return profile(req, res);
      case "POST /logout":
        return logout(req, res);
      case "GET /signed-out":
        return signedOut(req, res);
      case "POST /lifecycle/refresh":
        return lifecycleRefresh(req, res);
      case "POST /lifecycle/introspect":
        return lifecycleIntrospect(req, res);
      case "POST /lifecycle/revoke":
        return lifecycleRevoke(req, res);
      case "POST /lifecycle/logout":
        return lifecycleLogout(req, res);
      case "POST /account-security/start":
        return accountSecurityStart(req, res);
      case "GET /account-security/callback":
        return accountSecurityCallback(req, res);
      case "GET /settings/security":
        return securitySettings(req, res);
      default:
        return page(res, 404, "Not found", "");
    }
  };
  handle().catch((error: unknown) => {
    console.error(`${route}:`, error);
    if (!res.headersSent) page(res, 500, "Something went wrong", `<p>${escape(describe(error))}</p>`);
    else res.end();
  });
});

server.listen(PORT, () => console.log(`example customer app on ${ORIGIN}, issuer ${ISSUER}`));
for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => server.close(() => process.exit(0)));

// --- small helpers ---

function randomId(): string {
  return randomBytes(32).toString("base64url");
}

function cookie(name: string, value: string, maxAgeSeconds: number): string {
  // Browsers treat http://localhost as a secure context, so Secure cookies work in development.
  return `${name}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=Lax`;
}

function readCookie(req: http.IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=") || undefined;
  }
  return undefined;
}

function redirect(res: http.ServerResponse, location: string): void {
  res.writeHead(303, { location, "cache-control": "no-store" }).end();
}

function page(res: http.ServerResponse, status: number, title: string, body: string): void {
  res
    .writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "referrer-policy": "no-referrer" })
    .end(`<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title></head><body><h1>${escape(title)}</h1>${body}</body></html>`);
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function describe(error: unknown): string {
  if (error instanceof client.AuthorizationResponseError) return `${error.error}: ${error.error_description ?? ""}`;
  if (error instanceof client.ResponseBodyError) return `${error.error}: ${error.error_description ?? ""}`;
  return error instanceof Error ? error.message : String(error);
}

/** When the access token stops working, in Unix milliseconds (expires_in; 5 minutes when absent). */
function expiresAt(tokens: { expiresIn(): number | undefined }): number {
  return Date.now() + (tokens.expiresIn() ?? 300) * 1000;
}

/** `expires_at` of a launch or approve answer: Unix time in milliseconds (an integer); null otherwise. */
function expiryTime(value: unknown): number | null {
  return typeof value === "number" && Number.isSafeInteger(value) ? value : null;
}

/** The `error` code of a handoff error answer (`{"error": CODE, "error_description": text}`). */
function errorCode(body: unknown): string | null {
  return isRecord(body) && typeof body.error === "string" ? body.error : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Exactly these query parameters, each once, or null. */
function exactQuery<K extends string>(query: URLSearchParams, names: readonly K[]): Record<K, string> | null {
  const keys = [...query.keys()];
  if (keys.length !== names.length || !names.every((name) => query.getAll(name).length === 1)) return null;
  return Object.fromEntries(names.map((name) => [name, query.get(name)!])) as Record<K, string>;
}

/** A small urlencoded form body (at most 4 KiB), or null. */
async function readForm(req: http.IncomingMessage): Promise<URLSearchParams | null> {
  if (!(req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded")) return null;
  let body = "";
  for await (const chunk of req) {
    body += String(chunk);
    if (body.length > 4096) return null;
  }
  return new URLSearchParams(body);
}

function sameSecret(given: string | null, expected: string): boolean {
  if (given === null) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function decodeHeader(jwt: string): unknown {
  return JSON.parse(Buffer.from(jwt.split(".")[0] ?? "", "base64url").toString("utf8"));
}
