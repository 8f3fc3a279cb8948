/**
 * Pushed authorization requests (RFC 9126, docs/integration.md "Pushed authorization requests"),
 * proven with the two client libraries as published: openid-client (`buildAuthorizationUrlWithPAR`)
 * and oauth4webapi (`pushedAuthorizationRequest`), the user's side in Chromium. An application that
 * requires pushing is switched on in the console's Protocol card, and its front-channel request is
 * refused at its callback.
 */
import { expect, test, type Page } from "@playwright/test";
import * as client from "openid-client";
import * as oauth from "oauth4webapi";
import { APP_PORT, ISSUER } from "./env";
import { CONSOLE_BASE, signInToConsole } from "./console-operator";
import { importWorkspacePart } from "./workspace-import";

const ADA = { email: "ada@example.com", password: "correct horse battery staple" };
const PUBLIC_APP = { client_id: "e2e-par-public", redirect_uri: `http://localhost:${APP_PORT}/par/callback` };
const WEB_APP = { client_id: "e2e-par-web", redirect_uri: `http://localhost:${APP_PORT}/par/web-callback`, secret: "e2e-par-web-secret-0123456789abcdef012345" };

test.beforeAll(async () => {
  await importWorkspacePart({
    applications: [
      { client_id: PUBLIC_APP.client_id, name: "E2E PAR public", type: "PUBLIC", redirect_uris: [PUBLIC_APP.redirect_uri], identity_scopes: ["openid", "email"] },
      { client_id: WEB_APP.client_id, name: "E2E PAR web", type: "WEB_CONFIDENTIAL", redirect_uris: [WEB_APP.redirect_uri], identity_scopes: ["openid", "email"], secret: WEB_APP.secret },
    ],
  });
});

/** The callback is the test's: answered here, so the browser stops on it and the test reads its URL. */
async function answerCallbacks(page: Page): Promise<void> {
  await page.route(`http://localhost:${APP_PORT}/par/**`, (route) => route.fulfill({ status: 200, contentType: "text/plain", body: "callback" }));
}

/** Signs Ada in on the hosted page the authorization URL leads to; returns the callback URL. */
async function signInAt(page: Page, authorizationUrl: URL, callbackPrefix: string): Promise<URL> {
  await answerCallbacks(page);
  await page.goto(authorizationUrl.href);
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/sign-in`));
  await page.getByLabel("Email", { exact: true }).fill(ADA.email);
  await page.getByLabel("Password", { exact: true }).fill(ADA.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  // A passkey offer may follow the password: decline it.
  const notNow = page.getByRole("button", { name: "Not now" });
  await page.waitForURL((url) => url.href.startsWith(callbackPrefix) || url.pathname.endsWith("/sign-in"));
  if (!page.url().startsWith(callbackPrefix) && (await notNow.isVisible())) await notNow.click();
  await page.waitForURL((url) => url.href.startsWith(callbackPrefix));
  return new URL(page.url());
}

test("openid-client pushes the request (buildAuthorizationUrlWithPAR); the browser carries only client_id and request_uri", async ({ page }) => {
  const config = await client.discovery(new URL(ISSUER), WEB_APP.client_id, undefined, client.ClientSecretBasic(WEB_APP.secret), { execute: [client.allowInsecureRequests] });
  expect(config.serverMetadata().pushed_authorization_request_endpoint).toBe(`${ISSUER}/oauth2/par`);
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = await client.buildAuthorizationUrlWithPAR(config, {
    redirect_uri: WEB_APP.redirect_uri,
    scope: "openid email",
    state,
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  });
  expect([...url.searchParams.keys()].sort()).toEqual(["client_id", "request_uri"]);
  expect(url.searchParams.get("request_uri")).toMatch(/^urn:ietf:params:oauth:request_uri:/);
  const callback = await signInAt(page, url, WEB_APP.redirect_uri);
  const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
  expect(tokens.claims()?.email).toBe(ADA.email);
  expect(tokens.scope).toBe("openid email");

  // The request_uri is used once: the same address again is refused on the hosted page.
  const again = await page.goto(url.href);
  expect(again?.status()).toBe(400);
  await expect(page.getByText("invalid_request_uri")).toBeVisible();
});

test("oauth4webapi pushes a public client's request (pushedAuthorizationRequest) and completes the code flow", async ({ page }) => {
  const issuer = new URL(ISSUER);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oidc", [oauth.allowInsecureRequests]: true }));
  const app: oauth.Client = { client_id: PUBLIC_APP.client_id };
  const clientAuth = oauth.None();
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const pushed = await oauth.processPushedAuthorizationResponse(
    as,
    app,
    await oauth.pushedAuthorizationRequest(
      as,
      app,
      clientAuth,
      new URLSearchParams({
        redirect_uri: PUBLIC_APP.redirect_uri,
        response_type: "code",
        scope: "openid email",
        state,
        nonce,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
      }),
      { [oauth.allowInsecureRequests]: true },
    ),
  );
  expect(pushed.expires_in).toBe(60);
  const authorizationUrl = new URL(as.authorization_endpoint!);
  authorizationUrl.searchParams.set("client_id", app.client_id);
  authorizationUrl.searchParams.set("request_uri", pushed.request_uri);
  const callback = await signInAt(page, authorizationUrl, PUBLIC_APP.redirect_uri);
  const params = oauth.validateAuthResponse(as, app, callback, state);
  const response = await oauth.authorizationCodeGrantRequest(as, app, clientAuth, params, PUBLIC_APP.redirect_uri, verifier, { [oauth.allowInsecureRequests]: true });
  const result = await oauth.processAuthorizationCodeResponse(as, app, response, { expectedNonce: nonce, requireIdToken: true });
  expect(oauth.getValidatedIdTokenClaims(result)?.email).toBe(ADA.email);
});

test("an application switched to require pushed requests in the console: its front-channel request is refused at its callback", async ({ page, browser }) => {
  await signInToConsole(page);
  await page.goto(`${CONSOLE_BASE}/console/w/e2e/applications/${PUBLIC_APP.client_id}?tab=settings`);
  const protocol = page.getByRole("form", { name: "Protocol options" });
  await protocol.getByLabel("Require pushed authorization requests (PAR)").check();
  await protocol.getByRole("button", { name: "Save protocol options" }).click();
  await expect(protocol.getByText("Saved.")).toBeVisible();

  const issuer = new URL(ISSUER);
  const config = await client.discovery(issuer, PUBLIC_APP.client_id, undefined, client.None(), { execute: [client.allowInsecureRequests] });
  const state = client.randomState();
  const front = client.buildAuthorizationUrl(config, {
    redirect_uri: PUBLIC_APP.redirect_uri,
    scope: "openid",
    state,
    nonce: client.randomNonce(),
    code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
    code_challenge_method: "S256",
  });
  const user = await browser.newPage();
  await answerCallbacks(user);
  await user.goto(front.href);
  await user.waitForURL((url) => url.href.startsWith(PUBLIC_APP.redirect_uri));
  const refused = new URL(user.url());
  expect(refused.searchParams.get("error")).toBe("invalid_request");
  expect(refused.searchParams.get("error_description")).toContain("pushed authorization requests");
  expect(refused.searchParams.get("state")).toBe(state);
  expect(refused.searchParams.get("iss")).toBe(ISSUER);

  // The document asked for this application says so.
  const metadata = (await (await fetch(`${ISSUER}/.well-known/openid-configuration?client_id=${PUBLIC_APP.client_id}`)).json()) as Record<string, unknown>;
  expect(metadata.require_pushed_authorization_requests).toBe(true);
  await user.close();

  // Switched off again: the other specs' workspace is as it was.
  await protocol.getByLabel("Require pushed authorization requests (PAR)").uncheck();
  await protocol.getByRole("button", { name: "Save protocol options" }).click();
  await expect(protocol.getByText("Saved.")).toBeVisible();
});
