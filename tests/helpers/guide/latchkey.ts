/**
 * docs/integration.md's `latchkey.ts`, verbatim: the TypeScript blocks it marks `<!-- guide:run -->`,
 * in order. Kept as a file so the project's type check covers the guide's code;
 * tests/docs/integration-guide.test.ts checks it still equals the guide and runs it against a live server.
 */
// latchkey.ts: sign-in with Latchkey for your server.
import * as client from "openid-client";

// Pinned configuration, never derived from a request.
const issuer = new URL(process.env.LATCHKEY_ISSUER ?? "http://localhost:3000/t/acme");
const clientId = process.env.LATCHKEY_CLIENT_ID ?? "acme-web";
const clientSecret = process.env.LATCHKEY_CLIENT_SECRET!; // printed by `workspace import`, or shown by the console
const appOrigin = process.env.APP_ORIGIN ?? "http://localhost:4000";
const redirectUri = `${appOrigin}/auth/callback`;
const signedOutUri = `${appOrigin}/signed-out`;

// Development only: a local Latchkey serves plain http on localhost. Never in production.
const localDevelopment = issuer.protocol === "http:" && issuer.hostname === "localhost";

export const config = await client.discovery(
  issuer,
  clientId,
  { id_token_signed_response_alg: "ES256" },
  client.ClientSecretBasic(clientSecret),
  {
    // Verify the ID token's signature against the issuer's JWKS (openid-client skips it by default).
    execute: [client.enableNonRepudiationChecks, ...(localDevelopment ? [client.allowInsecureRequests] : [])],
  },
);

/** What your `start` route stores for this browser and consumes once at the callback. */
export interface Transaction {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** Your `start` route: store `transaction` server-side, bound to the browser, then redirect (303) to `url`. */
export async function startSignIn(): Promise<{ transaction: Transaction; url: URL }> {
  const transaction = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() };
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: "openid email profile offline_access",
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

/** Your `callback` route, after consuming (deleting) this browser's transaction. */
export async function finishSignIn(requestUrl: string, transaction: Transaction): Promise<SignedIn> {
  const tokens = await client.authorizationCodeGrant(config, new URL(requestUrl, appOrigin), {
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

/** Current authority: only HTTP 200 with active === true and our issuer, client, user and a future exp. */
export async function checkSession(session: SignedIn): Promise<boolean> {
  try {
    const response = await fetch(`${issuer.href}/oidc/session`, {
      headers: { authorization: `Bearer ${session.accessToken}` },
      redirect: "manual",
      cache: "no-store",
    });
    if (response.status !== 200) return false;
    const body = (await response.json()) as Record<string, unknown>;
    return (
      body.active === true &&
      body.iss === issuer.href &&
      body.client_id === clientId &&
      body.sub === session.sub &&
      typeof body.exp === "number" &&
      body.exp * 1000 > Date.now()
    );
  } catch {
    return false; // authority unconfirmed: deny
  }
}

/** A new token pair; on any failure (it throws) end the local session: the user signs in again. */
export async function refresh(session: SignedIn): Promise<SignedIn> {
  const tokens = await client.refreshTokenGrant(config, session.refreshToken);
  return {
    ...session,
    accessToken: tokens.access_token,
    accessTokenExpiresAt: Date.now() + (tokens.expiresIn() ?? 300) * 1000,
    refreshToken: tokens.refresh_token ?? session.refreshToken,
  };
}

/** Where your `POST /logout` route sends the browser (303), after ending the local session. */
export function logoutUrl(): URL {
  return client.buildEndSessionUrl(config, { post_logout_redirect_uri: signedOutUri });
}

/** Ends the grant: the refresh token and every access token issued from it. */
export async function revoke(session: SignedIn): Promise<void> {
  await client.tokenRevocation(config, session.refreshToken, { token_type_hint: "refresh_token" });
}
