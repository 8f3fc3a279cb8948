/**
 * DPoP (RFC 9449) with real client libraries: openid-client and oauth4webapi, each as the customer
 * application in this process, signing their proofs with their own keys; the user signs in with
 * Chromium. The application requires DPoP (`dpop_bound_access_tokens`), imported with the
 * workspace file. Each library gets a token bound to its key (retrying on the server's
 * use_dpop_nonce as it does by itself), reads UserInfo, the session check and the permission
 * check with proofs, and refreshes; the same token as a bearer token, and a refresh without the
 * key, are refused.
 */
import { expect, test, type Page } from "@playwright/test";
import * as client from "openid-client";
import * as oauth from "oauth4webapi";
import { APP, ISSUER } from "./env";
import { importWorkspacePart } from "./workspace-import";

const ADA = { email: "ada@example.com", password: "correct horse battery staple" };
const DPOP_APP = {
  client_id: "e2e-dpop",
  name: "E2E DPoP",
  type: "PUBLIC",
  redirect_uris: [`${APP}/dpop-callback`],
  identity_scopes: ["openid", "email", "profile"],
  dpop_bound_access_tokens: true,
};
const REDIRECT_URI = DPOP_APP.redirect_uris[0];

test.beforeAll(async () => {
  await importWorkspacePart({ applications: [DPOP_APP] });
});

/**
 * Drives the browser through `authorizationUrl` and the hosted sign-in; returns the callback URL
 * the browser was sent to (this process is the application: what the browser then shows is no matter).
 */
async function browserSignIn(page: Page, authorizationUrl: URL): Promise<URL> {
  await page.goto(authorizationUrl.href);
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/sign-in`));
  await page.getByLabel("Email", { exact: true }).fill(ADA.email);
  await page.getByLabel("Password", { exact: true }).fill(ADA.password);
  const callback = page.waitForRequest((r) => r.url().startsWith(`${REDIRECT_URI}?`));
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  return new URL((await callback).url());
}

/** The same access token as a bearer token: refused (RFC 9449 §7.2). */
async function asBearer(token: string, path: string): Promise<number> {
  return (await fetch(`${ISSUER}${path}`, { headers: { authorization: `Bearer ${token}` } })).status;
}

const REPORTS_API = "https://reports.e2e.example";
const CHECK_BODY = JSON.stringify({ resource: REPORTS_API, permission: "read:reports", organization_id: null });

/**
 * An API server's side of the permission check with a DPoP-bound token: the API receives the
 * client's request (here, the client library's request to the API is caught by its custom fetch
 * instead of sent) and forwards the token and the client's proof, as received, to the check.
 */
const reportsApi = {
  received: null as Headers | null,
  /** The client library's fetch: a request to the API is received here; every other one goes out. */
  fetch: (async (url: string, init: any) => {
    if (!String(url).startsWith(`${REPORTS_API}/`)) return fetch(url, init);
    reportsApi.received = new Headers(init?.headers);
    return new Response("{}", { status: 200, headers: { "content-type": "application/json" } });
  }) as any,
  /** The API asks the permission check, forwarding Authorization and DPoP. */
  async check(): Promise<Response> {
    const received = reportsApi.received!;
    return fetch(`${ISSUER}/authorization/check`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: received.get("authorization")!, dpop: received.get("dpop")! },
      body: CHECK_BODY,
    });
  },
};

test("openid-client: a DPoP-bound code flow, UserInfo, the session and permission checks, and refresh with the key", async ({ page }) => {
  const config = await client.discovery(new URL(ISSUER), DPOP_APP.client_id, undefined, client.None(), { execute: [client.allowInsecureRequests] });
  expect(config.serverMetadata().dpop_signing_alg_values_supported).toContain("ES256");
  const dpop = client.getDPoPHandle(config, await client.randomDPoPKeyPair("ES256"));

  const codeVerifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: "openid email",
    state,
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
  });
  const callback = await browserSignIn(page, url);

  // The first token request has no nonce: the server answers use_dpop_nonce and openid-client retries with it.
  const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: state, expectedNonce: nonce }, undefined, { DPoP: dpop });
  expect(tokens.token_type).toBe("dpop");
  const sub = tokens.claims()!.sub;

  const userinfo = await client.fetchUserInfo(config, tokens.access_token, sub, { DPoP: dpop });
  expect(userinfo).toMatchObject({ sub, email: ADA.email });

  const session = await client.fetchProtectedResource(config, tokens.access_token, new URL(`${ISSUER}/oidc/session`), "GET", undefined, undefined, { DPoP: dpop });
  expect(session.status).toBe(200);
  expect(await session.json()).toMatchObject({ active: true, client_id: DPOP_APP.client_id, sub });

  // The permission check takes the proof the client sent the API, forwarded by the API (the token has
  // no API audience: a well-formed denial, not a 401); the same forwarded proof a second time is a replay.
  config[client.customFetch] = reportsApi.fetch;
  await client.fetchProtectedResource(config, tokens.access_token, new URL(`${REPORTS_API}/reports/1`), "GET", undefined, undefined, { DPoP: dpop });
  delete config[client.customFetch];
  expect(reportsApi.received!.get("authorization")).toBe(`DPoP ${tokens.access_token}`);
  const check = await reportsApi.check();
  expect(check.status).toBe(200);
  expect(await check.json()).toEqual({ allowed: false });
  expect((await reportsApi.check()).status).toBe(401);

  expect(await asBearer(tokens.access_token, "/oidc/userinfo")).toBe(401);
  expect(await asBearer(tokens.access_token, "/oidc/session")).toBe(401);

  // Another key cannot refresh (the public client's refresh token is bound to the key), and the token stays usable.
  const thief = client.getDPoPHandle(config, await client.randomDPoPKeyPair("ES256"));
  const stolen = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: thief }).catch((e: unknown) => e);
  expect(stolen).toBeInstanceOf(client.ResponseBodyError);
  expect((stolen as client.ResponseBodyError).error).toBe("invalid_grant");
  // Without a proof at all: the application requires DPoP.
  const bare = await client.refreshTokenGrant(config, tokens.refresh_token!).catch((e: unknown) => e);
  expect((bare as client.ResponseBodyError).error).toBe("invalid_request");

  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: dpop });
  expect(refreshed.token_type).toBe("dpop");
  expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
  expect(await client.fetchUserInfo(config, refreshed.access_token, sub, { DPoP: dpop })).toMatchObject({ sub });
});

test("oauth4webapi: a DPoP-bound code flow with an Ed25519 key, UserInfo, a protected resource and refresh", async ({ page }) => {
  const issuer = new URL(ISSUER);
  const insecure = { [oauth.allowInsecureRequests]: true } as const;
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  const app: oauth.Client = { client_id: DPOP_APP.client_id };
  const auth = oauth.None();
  const DPoP = oauth.DPoP(app, await oauth.generateKeyPair("Ed25519"));

  const codeVerifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint!);
  for (const [k, v] of Object.entries({
    client_id: app.client_id,
    redirect_uri: REDIRECT_URI,
    response_type: "code",
    scope: "openid email",
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
  })) {
    url.searchParams.set(k, v);
  }
  const params = oauth.validateAuthResponse(as, app, await browserSignIn(page, url), state);

  // oauth4webapi leaves the use_dpop_nonce retry to the caller; its DPoP handle has cached the nonce.
  const retryOnNonce = async <T>(attempt: () => Promise<T>): Promise<T> => {
    try {
      return await attempt();
    } catch (error) {
      if (!oauth.isDPoPNonceError(error)) throw error;
      return attempt();
    }
  };
  const tokens = await retryOnNonce(async () =>
    oauth.processAuthorizationCodeResponse(as, app, await oauth.authorizationCodeGrantRequest(as, app, auth, params, REDIRECT_URI, codeVerifier, { DPoP, ...insecure }), {
      expectedNonce: nonce,
      requireIdToken: true,
    }),
  );
  expect(tokens.token_type).toBe("dpop");
  const sub = oauth.getValidatedIdTokenClaims(tokens)!.sub;

  const userinfo = await oauth.processUserInfoResponse(as, app, sub, await oauth.userInfoRequest(as, app, tokens.access_token, { DPoP, ...insecure }));
  expect(userinfo).toMatchObject({ sub, email: ADA.email });

  const session = await oauth.protectedResourceRequest(tokens.access_token, "GET", new URL(`${ISSUER}/oidc/session`), new Headers(), null, { DPoP, ...insecure });
  expect(session.status).toBe(200);
  expect(await session.json()).toMatchObject({ active: true, sub });

  await oauth.protectedResourceRequest(tokens.access_token, "GET", new URL(`${REPORTS_API}/reports/1`), new Headers(), null, { DPoP, [oauth.customFetch]: reportsApi.fetch });
  const check = await reportsApi.check();
  expect(check.status).toBe(200);

  expect(await asBearer(tokens.access_token, "/oidc/userinfo")).toBe(401);

  const refreshed = await retryOnNonce(async () =>
    oauth.processRefreshTokenResponse(as, app, await oauth.refreshTokenGrantRequest(as, app, auth, tokens.refresh_token!, { DPoP, ...insecure })),
  );
  expect(refreshed.token_type).toBe("dpop");
  const again = await oauth.processUserInfoResponse(as, app, sub, await oauth.userInfoRequest(as, app, refreshed.access_token, { DPoP, ...insecure }));
  expect(again.sub).toBe(sub);
});
