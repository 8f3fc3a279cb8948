/**
 * docs/integration.md's `latchkey.ts`, verbatim: the TypeScript blocks it marks `<!-- guide:run -->`,
 * in order. The demo application (lib/demo/app.ts, served at /demo) runs it; the project's type
 * check covers it; tests/docs/integration-guide.test.ts checks it still equals the guide and runs it
 * against a live server; e2e/integration-guide.spec.ts runs it in a browser.
 */
// latchkey.ts: sign-in with Latchkey for your server.
import * as client from "openid-client";

/** Your application's registration: pinned configuration, never derived from a request. */
export interface Registration {
  issuer: URL; // <PUBLIC_URL>/t/<workspace-id>
  clientId: string;
  /** A confidential application's secret; null for a public application (PKCE only, no secret). */
  clientSecret: string | null;
  redirectUri: string; // your callback route, registered exactly
  signedOutUri: string; // where hosted logout comes back to, registered as a post-logout redirect URI
  scope: string;
}

/** This guide's application, from the environment. */
export function registrationFromEnv(env: Record<string, string | undefined> = process.env): Registration {
  const appOrigin = env.APP_ORIGIN ?? "http://localhost:4000";
  // Printed by `workspace import`, or shown by the console. Never fall back to no secret.
  const clientSecret = env.LATCHKEY_CLIENT_SECRET;
  if (!clientSecret) throw new Error("LATCHKEY_CLIENT_SECRET is not set");
  return {
    issuer: new URL(env.LATCHKEY_ISSUER ?? "http://localhost:3000/t/acme"),
    clientId: env.LATCHKEY_CLIENT_ID ?? "acme-web",
    clientSecret,
    redirectUri: `${appOrigin}/auth/callback`,
    signedOutUri: `${appOrigin}/signed-out`,
    scope: "openid email profile offline_access",
  };
}

/** What every function below takes: the registration and the issuer's configuration. */
export interface Latchkey {
  registration: Registration;
  config: client.Configuration;
}

/** Discovery, once when your server starts: `const latchkey = await connect(registrationFromEnv());` */
export async function connect(registration: Registration): Promise<Latchkey> {
  const { issuer, clientId, clientSecret } = registration;
  // Development only: a local Latchkey serves plain http on localhost. Never in production.
  const localDevelopment = issuer.protocol === "http:" && issuer.hostname === "localhost";
  const config = await client.discovery(
    issuer,
    clientId,
    { id_token_signed_response_alg: "ES256" },
    clientSecret === null ? client.None() : client.ClientSecretBasic(clientSecret),
    {
      // Verify the ID token's signature against the issuer's JWKS (openid-client skips it by default).
      execute: [client.enableNonRepudiationChecks, ...(localDevelopment ? [client.allowInsecureRequests] : [])],
    },
  );
  return { registration, config };
}

/** What your `start` route stores for this browser and consumes once at the callback. */
export interface Transaction {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** Your `start` route: store `transaction` server-side, bound to the browser, then redirect (303) to `url`. */
export async function startSignIn({ config, registration }: Latchkey): Promise<{ transaction: Transaction; url: URL }> {
  const transaction = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() };
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: registration.redirectUri,
    scope: registration.scope,
    state: transaction.state,
    nonce: transaction.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(transaction.codeVerifier),
    code_challenge_method: "S256",
  });
  return { transaction, url };
}

/** Your `start` route with a pushed authorization request (RFC 9126): the same parameters, sent on the back channel; the browser carries only client_id and request_uri. */
export async function startSignInPushed({ config, registration }: Latchkey): Promise<{ transaction: Transaction; url: URL }> {
  const transaction = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() };
  const url = await client.buildAuthorizationUrlWithPAR(config, {
    redirect_uri: registration.redirectUri,
    scope: registration.scope,
    state: transaction.state,
    nonce: transaction.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(transaction.codeVerifier),
    code_challenge_method: "S256",
  });
  return { transaction, url };
}

/** What your application session keeps, server-side. The user is the pair (iss, sub). */
export interface SignedIn {
  iss: string;
  sub: string;
  accessToken: string;
  accessTokenExpiresAt: number;
  refreshToken: string;
  claims: client.IDToken;
  userinfo: client.UserInfoResponse;
}

/** Your `callback` route, after consuming (deleting) this browser's transaction. `requestPath`: path and query. */
export async function finishSignIn({ config, registration }: Latchkey, requestPath: string, transaction: Transaction): Promise<SignedIn> {
  // The current URL from the registered callback, never from the request's Host header.
  const tokens = await client.authorizationCodeGrant(config, new URL(requestPath, registration.redirectUri), {
    pkceCodeVerifier: transaction.codeVerifier,
    expectedState: transaction.state,
    expectedNonce: transaction.nonce,
    idTokenExpected: true,
  });
  const claims = tokens.claims()!; // the verified ID token's claims
  // Throws unless UserInfo's sub equals the ID token's.
  const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
  if (!tokens.refresh_token) throw new Error("no refresh token");
  return {
    iss: claims.iss,
    sub: claims.sub,
    accessToken: tokens.access_token,
    accessTokenExpiresAt: Date.now() + (tokens.expiresIn() ?? 300) * 1000,
    refreshToken: tokens.refresh_token,
    claims,
    userinfo,
  };
}

/** The session check's answer as it came: the status and the JSON body (null when it is not JSON). */
export async function sessionCheck({ registration }: Latchkey, session: SignedIn): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const response = await fetch(`${registration.issuer.href}/oidc/session`, {
    headers: { authorization: `Bearer ${session.accessToken}` },
    redirect: "manual",
    cache: "no-store",
  });
  const body = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  return { status: response.status, body };
}

/** Current authority: only HTTP 200 with active === true and our issuer, client, user and a future exp. */
export async function checkSession(latchkey: Latchkey, session: SignedIn): Promise<boolean> {
  try {
    const { status, body } = await sessionCheck(latchkey, session);
    return (
      status === 200 &&
      body?.active === true &&
      body.iss === latchkey.registration.issuer.href &&
      body.client_id === latchkey.registration.clientId &&
      body.sub === session.sub &&
      typeof body.exp === "number" &&
      body.exp * 1000 > Date.now()
    );
  } catch {
    return false; // authority unconfirmed: deny
  }
}

/** A new token pair; on any failure (it throws) end the local session: the user signs in again. */
export async function refresh({ config }: Latchkey, session: SignedIn): Promise<SignedIn> {
  const tokens = await client.refreshTokenGrant(config, session.refreshToken);
  return {
    ...session,
    accessToken: tokens.access_token,
    accessTokenExpiresAt: Date.now() + (tokens.expiresIn() ?? 300) * 1000,
    refreshToken: tokens.refresh_token ?? session.refreshToken,
  };
}

/** Where your `POST /logout` route sends the browser (303), after ending the local session. */
export function logoutUrl({ config, registration }: Latchkey): URL {
  return client.buildEndSessionUrl(config, { post_logout_redirect_uri: registration.signedOutUri });
}

/** Ends the grant: the refresh token and every access token issued from it. */
export async function revoke({ config }: Latchkey, session: SignedIn): Promise<void> {
  await client.tokenRevocation(config, session.refreshToken, { token_type_hint: "refresh_token" });
}
