// app.mjs
import { randomBytes, timingSafeEqual } from "node:crypto";
import express from "express";
import session from "express-session";
import * as client from "openid-client";
import { Strategy } from "openid-client/passport";
import passport from "passport";

const issuer = new URL(process.env.LATCHKEY_ISSUER); // <PUBLIC_URL>/t/<workspace-id>
const appOrigin = process.env.APP_ORIGIN ?? "http://localhost:4000";
// Development only: a local Latchkey serves plain http on localhost. Never in production.
const localDevelopment = issuer.protocol === "http:" && issuer.hostname === "localhost";
const config = await client.discovery(
  issuer,
  process.env.LATCHKEY_CLIENT_ID,
  { id_token_signed_response_alg: "ES256" },
  client.ClientSecretBasic(process.env.LATCHKEY_CLIENT_SECRET), // HTTP Basic only
  { execute: [client.enableNonRepudiationChecks, ...(localDevelopment ? [client.allowInsecureRequests] : [])] },
);

// With PKCE advertised, the strategy sends neither state nor nonce: Latchkey requires both.
class LatchkeyStrategy extends Strategy {
  authorizationRequestParams(req, options) {
    const params = new URLSearchParams(super.authorizationRequestParams(req, options));
    params.set("state", client.randomState());
    params.set("nonce", client.randomNonce());
    return params;
  }
}

passport.use(
  "latchkey",
  new LatchkeyStrategy({ config, scope: "openid email profile offline_access", callbackURL: `${appOrigin}/callback` }, (tokens, verified) => {
    const claims = tokens.claims();
    verified(null, { email: claims.email ?? claims.sub, accessToken: tokens.access_token, refreshToken: tokens.refresh_token });
  }),
);
// The user, tokens included, lives in the session store on the server (use a real store, not the memory one).
passport.serializeUser((user, done) => done(null, user));
passport.deserializeUser((user, done) => done(null, user));

const app = express();
app.use(express.urlencoded({ extended: false }));
app.use(session({ secret: process.env.SESSION_SECRET, resave: false, saveUninitialized: false, cookie: { httpOnly: true, sameSite: "lax" } }));
app.use(passport.session());

const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (res, body) => res.type("html").send(`<!doctype html><title>Passport and Latchkey</title>${body}`);
const button = (req, action, label) =>
  `<form method="post" action="${action}"><input type="hidden" name="csrf" value="${req.session.csrf}"><button>${label}</button></form>`;

async function sessionCheck(accessToken) {
  // 200 while the token and its whole authority chain (grant, session, user, client) are current.
  const answer = await fetch(`${issuer.href}/oidc/session`, { headers: { Authorization: `Bearer ${accessToken}` } });
  return answer.status;
}

/** POST routes: a signed-in session and the CSRF token of its page. */
function signedIn(req, res, next) {
  const sent = String(req.body?.csrf ?? "");
  const expected = req.session.csrf ?? "";
  if (!req.user || sent.length !== expected.length || !timingSafeEqual(Buffer.from(sent), Buffer.from(expected))) return res.status(403).send("Forbidden");
  next();
}

app.get("/", (req, res) => {
  if (!req.user) return page(res, '<h1>Signed out</h1><a href="/login">Sign in</a>');
  page(
    res,
    `<h1>Signed in as ${escape(req.user.email)}</h1><p id=status>${escape(req.session.status)}</p>` +
      button(req, "/check", "Check session") + button(req, "/refresh", "Refresh tokens") +
      button(req, "/logout", "Sign out") + button(req, "/disconnect", "Disconnect"),
  );
});

app.get("/login", passport.authenticate("latchkey"));

// Checks state and nonce, exchanges the code (Basic, PKCE), verifies the ES256 ID token.
app.get("/callback", passport.authenticate("latchkey", { failureRedirect: "/" }), (req, res) => {
  req.session.csrf = randomBytes(32).toString("base64url");
  req.session.status = "Signed in";
  res.redirect("/");
});

app.post("/check", signedIn, async (req, res) => {
  const status = await sessionCheck(req.user.accessToken);
  req.session.status = status === 200 ? "Session active" : `Session ended (HTTP ${status})`;
  res.redirect(303, "/");
});

app.post("/refresh", signedIn, async (req, res, next) => {
  try {
    const tokens = await client.refreshTokenGrant(config, req.user.refreshToken);
    // Rotation: the refresh token is single use; keep the new one.
    req.session.passport.user = { ...req.user, accessToken: tokens.access_token, refreshToken: tokens.refresh_token };
    req.session.status = "Tokens refreshed";
    res.redirect(303, "/");
  } catch {
    // invalid_grant: the grant ended (signed out, revoked, expired). Sign in again.
    req.logout((error) => (error ? next(error) : res.redirect(303, "/")));
  }
});

app.post("/logout", signedIn, (req, res, next) => {
  req.logout((error) => {
    if (error) return next(error);
    // Exactly these two parameters. Hosted logout ends the hosted session and every grant of it.
    res.redirect(303, client.buildEndSessionUrl(config, { post_logout_redirect_uri: `${appOrigin}/signed-out` }).href);
  });
});

app.get("/signed-out", (req, res) => page(res, '<h1>Signed out</h1><a href="/login">Sign in again</a>'));

app.post("/disconnect", signedIn, async (req, res, next) => {
  // Revocation of the refresh token ends the grant and its access tokens (not the hosted session).
  const { accessToken, refreshToken } = req.user;
  await client.tokenRevocation(config, refreshToken, { token_type_hint: "refresh_token" });
  const status = await sessionCheck(accessToken);
  req.logout((error) => (error ? next(error) : page(res, `<h1>Disconnected</h1><p id=status>Session check after revocation: HTTP ${status}</p>`)));
});

app.listen(Number(process.env.PORT ?? 4000), "localhost");
