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
 * Run: npx tsx e2e/customer-app.ts (expects Latchkey on http://localhost:3111 with the
 * e2e/fixtures/e2e-workspace.json workspace). Sessions live in memory: a real application
 * keeps them in its own store.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import * as client from "openid-client";

const ISSUER = process.env.LATCHKEY_ISSUER ?? "http://localhost:3111/t/e2e";
const CLIENT_ID = process.env.CLIENT_ID ?? "e2e-web";
const CLIENT_SECRET = process.env.CLIENT_SECRET ?? "e2e-web-secret-0123456789abcdef0123456789";
const PORT = Number(process.env.PORT ?? 3112);
const ORIGIN = `http://localhost:${PORT}`;
const REDIRECT_URI = `${ORIGIN}/callback`;
const SIGNED_OUT_URI = `${ORIGIN}/signed-out`;
const TRANSACTION_TTL_MS = 10 * 60_000;

interface Transaction {
  state: string;
  nonce: string;
  codeVerifier: string;
  expiresAt: number;
}

interface AppSession {
  sub: string;
  accessToken: string;
  refreshToken?: string;
  idToken: { header: unknown; claims: client.IDToken };
  userinfo: client.UserInfoResponse;
}

const transactions = new Map<string, Transaction>();
const sessions = new Map<string, AppSession>();

// Discovery runs on first use, so the app can start before Latchkey does.
let configuration: Promise<client.Configuration> | undefined;
function config(): Promise<client.Configuration> {
  const issuer = new URL(ISSUER);
  const loopback = issuer.hostname === "localhost" || issuer.hostname === "127.0.0.1";
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
    sub: claims.sub,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    idToken: { header: decodeHeader(tokens.id_token), claims },
    userinfo,
  });
  res.setHeader("Set-Cookie", [cookie("app_tx", "", 0), cookie("app_session", sessionId, 12 * 3600)]);
  redirect(res, "/profile");
}

/** Online session check: access only with 200, active === true, and matching iss, client, sub, exp. */
async function checkSession(session: AppSession): Promise<{ ok: boolean; status: number; body: unknown }> {
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

async function profile(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const id = readCookie(req, "app_session");
  const session = id ? sessions.get(id) : undefined;
  if (!id || !session) return redirect(res, "/start");
  const check = await checkSession(session);
  if (!check.ok) {
    sessions.delete(id);
    res.setHeader("Set-Cookie", cookie("app_session", "", 0));
    return page(res, 401, "Session ended", `<p>Your session has ended. <a href="/start">Sign in again</a>.</p>`);
  }
  const result = { id_token: session.idToken, userinfo: session.userinfo, session_check: check.body };
  page(
    res,
    200,
    `Signed in as ${session.userinfo.name ?? session.userinfo.email ?? session.sub}`,
    `<pre data-testid="result">${escape(JSON.stringify(result, null, 2))}</pre>
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
const signingOut = new Map<string, { accessToken: string; refreshToken?: string; expiresAt: number }>();

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
  sessions.set(id, { ...session, accessToken: tokens.access_token, refreshToken: tokens.refresh_token ?? session.refreshToken });
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
    signingOut.set(handle, { accessToken: session.accessToken, refreshToken: session.refreshToken, expiresAt: Date.now() + 10 * 60_000 });
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
    const afterLogout = {
      access_token: await client.tokenIntrospection(cfg, pending.accessToken),
      refresh_token: pending.refreshToken ? await client.tokenIntrospection(cfg, pending.refreshToken) : null,
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

function decodeHeader(jwt: string): unknown {
  return JSON.parse(Buffer.from(jwt.split(".")[0] ?? "", "base64url").toString("utf8"));
}
