// app.mjs
import { randomBytes, timingSafeEqual } from "node:crypto";
import http from "node:http";
import * as oauth from "oauth4webapi";

const issuer = new URL(process.env.LATCHKEY_ISSUER); // <PUBLIC_URL>/t/<workspace-id>
const client = { client_id: process.env.LATCHKEY_CLIENT_ID, id_token_signed_response_alg: "ES256" };
const clientAuth = oauth.ClientSecretBasic(process.env.LATCHKEY_CLIENT_SECRET); // HTTP Basic only
const appOrigin = process.env.APP_ORIGIN ?? "http://localhost:4000";
const redirectUri = `${appOrigin}/callback`;
// Development only: a local Latchkey serves plain http on localhost. Never in production.
const options = issuer.protocol === "http:" && issuer.hostname === "localhost" ? { [oauth.allowInsecureRequests]: true } : {};

const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...options, algorithm: "oidc" }));

// What the browser's cookie stands for; in memory to keep the example short (use your database).
const sessions = new Map();
const random = () => randomBytes(32).toString("base64url");
const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const sameSecret = (a, b) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

function sessionOf(req) {
  const id = /(?:^|;\s*)sid=([A-Za-z0-9_-]+)/.exec(req.headers.cookie ?? "")?.[1];
  return id && sessions.has(id) ? { id, value: sessions.get(id) } : { id: null, value: null };
}
function start(res, value) {
  const id = random();
  sessions.set(id, value);
  res.setHeader("Set-Cookie", `sid=${id}; Path=/; HttpOnly; SameSite=Lax`);
}
function page(res, body, status = 200) {
  res.writeHead(status, { "Content-Type": "text/html; charset=utf-8" }).end(`<!doctype html><title>oauth4webapi and Latchkey</title>${body}`);
}
function redirect(res, location, status = 303) {
  res.writeHead(status, { Location: location }).end();
}
async function form(req) {
  let body = "";
  for await (const chunk of req) body += chunk;
  return new URLSearchParams(body);
}
async function sessionCheck(accessToken) {
  // 200 while the token and its whole authority chain (grant, session, user, client) are current.
  const answer = await fetch(new URL(`${issuer.pathname}/oidc/session`, issuer), { headers: { Authorization: `Bearer ${accessToken}` } });
  return answer.status;
}
function button(signedIn, action, label) {
  return `<form method="post" action="${action}"><input type="hidden" name="csrf" value="${signedIn.csrf}"><button>${label}</button></form>`;
}

async function handle(req, res) {
  const url = new URL(req.url, appOrigin);
  const { id, value } = sessionOf(req);

  if (req.method === "GET" && url.pathname === "/") {
    if (!value?.tokens) return page(res, '<h1>Signed out</h1><a href="/login">Sign in</a>');
    return page(
      res,
      `<h1>Signed in as ${escape(value.email)}</h1><p id=status>${escape(value.status)}</p>` +
        button(value, "/check", "Check session") + button(value, "/refresh", "Refresh tokens") +
        button(value, "/logout", "Sign out") + button(value, "/disconnect", "Disconnect"),
    );
  }
  if (req.method === "GET" && url.pathname === "/login") {
    const pending = { state: oauth.generateRandomState(), nonce: oauth.generateRandomNonce(), verifier: oauth.generateRandomCodeVerifier() };
    start(res, pending);
    const authorize = new URL(as.authorization_endpoint);
    authorize.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: "code",
      scope: "openid email profile offline_access",
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: "S256",
    }).toString();
    return redirect(res, authorize.href, 302);
  }
  if (req.method === "GET" && url.pathname === "/callback") {
    if (!value?.state) return page(res, "<h1>No sign-in in progress in this browser</h1>", 400);
    sessions.delete(id);
    // Checks state and RFC 9207's iss; an error response throws.
    const params = oauth.validateAuthResponse(as, client, url, value.state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, value.verifier, options);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: value.nonce, requireIdToken: true });
    await oauth.validateApplicationLevelSignature(as, response, options); // the ID token's ES256 signature, against the JWKS
    const claims = oauth.getValidatedIdTokenClaims(tokens);
    start(res, { email: claims.email ?? claims.sub, csrf: random(), status: "Signed in", tokens });
    return redirect(res, "/");
  }
  if (req.method === "GET" && url.pathname === "/signed-out") return page(res, '<h1>Signed out</h1><a href="/login">Sign in again</a>');

  // The POST routes: a signed-in session, and the CSRF token of its page.
  if (req.method !== "POST") return page(res, "<h1>Not found</h1>", 404);
  const body = await form(req);
  if (!value?.tokens || !sameSecret(body.get("csrf") ?? "", value.csrf)) return page(res, "<h1>Forbidden</h1>", 403);

  if (url.pathname === "/check") {
    const status = await sessionCheck(value.tokens.access_token);
    value.status = status === 200 ? "Session active" : `Session ended (HTTP ${status})`;
    return redirect(res, "/");
  }
  if (url.pathname === "/refresh") {
    try {
      const response = await oauth.refreshTokenGrantRequest(as, client, clientAuth, value.tokens.refresh_token, options);
      // Rotation: the refresh token is single use; keep the new one.
      value.tokens = await oauth.processRefreshTokenResponse(as, client, response);
      value.status = "Tokens refreshed";
    } catch {
      // invalid_grant: the grant ended (signed out, revoked, expired). Sign in again.
      sessions.delete(id);
    }
    return redirect(res, "/");
  }
  if (url.pathname === "/logout") {
    sessions.delete(id);
    // Exactly these two parameters. Hosted logout ends the hosted session and every grant of it.
    const logout = new URL(as.end_session_endpoint);
    logout.search = new URLSearchParams({ client_id: client.client_id, post_logout_redirect_uri: `${appOrigin}/signed-out` }).toString();
    return redirect(res, logout.href);
  }
  if (url.pathname === "/disconnect") {
    // Revocation of the refresh token ends the grant and its access tokens (not the hosted session).
    const response = await oauth.revocationRequest(as, client, clientAuth, value.tokens.refresh_token, {
      ...options,
      additionalParameters: { token_type_hint: "refresh_token" },
    });
    await oauth.processRevocationResponse(response);
    sessions.delete(id);
    return page(res, `<h1>Disconnected</h1><p id=status>Session check after revocation: HTTP ${await sessionCheck(value.tokens.access_token)}</p>`);
  }
  return page(res, "<h1>Not found</h1>", 404);
}

http
  .createServer((req, res) =>
    handle(req, res).catch((error) => {
      console.error(error);
      if (!res.headersSent) page(res, "<h1>Sign-in failed</h1>", 502);
    }),
  )
  .listen(Number(process.env.PORT ?? 4000), "localhost");
