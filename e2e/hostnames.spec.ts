/**
 * A workspace at its own hostname, end to end: the workspace `acme`
 * (e2e/fixtures/e2e-hostnames-workspace.json) has the verified hostname login.acme.test, whose
 * issuer is http://login.acme.test:<E2E_PORT>/t/acme (a hostname is served with PUBLIC_URL's
 * scheme and port, and the e2e server's PUBLIC_URL is http on loopback).
 *
 * No DNS is asked anywhere. Chromium maps login.acme.test and other.acme.test to 127.0.0.1
 * (--host-resolver-rules, playwright.config.ts), and treats http://login.acme.test:<port> as a
 * secure context (--unsafely-treat-insecure-origin-as-secure): Latchkey's cookies are always
 * Secure, which browsers refuse over plain http from any other name than localhost.
 *
 * Node resolves through DNS, so the server-side calls use e2e/resolving-fetch.ts: a fetch over
 * node:http whose `lookup` answers 127.0.0.1 for login.acme.test, the URL (and so the Host header)
 * unchanged. The example customer application (e2e/customer-app.ts, openid-client) makes it its
 * global fetch when given RESOLVE=login.acme.test=127.0.0.1; the spec's own openid-client calls
 * take it as openid-client's `customFetch`.
 *
 * Sessions, pending sign-ins and grants record their hostname in the database, so the spec runs
 * in both the embedded and the PostgreSQL runs (it takes seconds).
 */
import { expect, test, type Page, type Response } from "@playwright/test";
import * as client from "openid-client";
import { startCustomerApp, type CustomerAppProcess } from "./customer-app-process";
import { ACME_APP_PORT, ACME_DEFAULT_HOST_ISSUER, ACME_HOSTNAME, ACME_ISSUER, LATCHKEY_PORT, UNKNOWN_HOSTNAME } from "./env";
import { parseResolve, resolvingFetch } from "./resolving-fetch";

const RESOLVE = `${ACME_HOSTNAME}=127.0.0.1`;
const APP_CLIENT = { id: "acme-web", secret: "acme-web-secret-0123456789abcdef0123456789" };
const APP = `http://localhost:${ACME_APP_PORT}`;
const WILE = { email: "wile@acme.test", password: "wile signs in at his company's name" };
const GENERIC_404 = { error: "invalid_request", error_description: "Not found" };
const hostFetch = resolvingFetch(parseResolve(RESOLVE));

let app: CustomerAppProcess;

test.beforeAll(async () => {
  app = await startCustomerApp({ port: ACME_APP_PORT, clientId: APP_CLIENT.id, clientSecret: APP_CLIENT.secret, issuer: ACME_ISSUER, resolve: RESOLVE });
});

test.afterAll(async () => {
  await app?.stop();
});

/** Every Set-Cookie the browser received from `hostname`, as sent. */
function setCookiesFrom(page: Page, hostname: string): () => Promise<string[]> {
  const pending: Promise<string[]>[] = [];
  page.on("response", (response: Response) => {
    if (new URL(response.url()).hostname === hostname) pending.push(response.headerValues("set-cookie"));
  });
  return async () => (await Promise.all(pending)).flat();
}

/** The hosted sign-in at the hostname: the page is there, not at the default host. */
async function signInAtHostname(page: Page): Promise<void> {
  await expect(page).toHaveURL((url) => url.host === `${ACME_HOSTNAME}:${LATCHKEY_PORT}` && url.href.startsWith(`${ACME_ISSUER}/`));
  await page.getByLabel("Email", { exact: true }).fill(WILE.email);
  await page.getByLabel("Password", { exact: true }).fill(WILE.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

/** A same-origin POST from the app's page: the browser sends the app's session cookie and Origin. */
async function appPost(page: Page, path: string): Promise<{ status: number; body: Record<string, any> }> {
  return page.evaluate(async (p) => {
    const response = await fetch(p, { method: "POST" });
    return { status: response.status, body: await response.json() };
  }, path);
}

test("an openid-client application configured with the hostname's issuer signs in, refreshes and logs out there", async ({ page }) => {
  // Discovery at the hostname names the hostname's issuer and endpoints (openid-client, in the
  // app, also refuses any issuer but the exact one it was configured with).
  const discovery = await page.goto(`${ACME_ISSUER}/.well-known/openid-configuration`);
  expect(discovery?.status()).toBe(200);
  const metadata = (await discovery!.json()) as Record<string, unknown>;
  expect(metadata.issuer).toBe(ACME_ISSUER);
  for (const key of ["authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri", "end_session_endpoint"]) {
    expect(String(metadata[key]), key).toMatch(new RegExp(`^${ACME_ISSUER.replaceAll(".", "\\.")}/`));
  }

  await page.goto(`${APP}/start`);
  await signInAtHostname(page);
  await page.waitForURL(`${APP}/profile`);
  const result = JSON.parse((await page.getByTestId("result").textContent()) ?? "null");
  const sub = result.id_token.claims.sub;
  expect(result.id_token.claims).toMatchObject({ iss: ACME_ISSUER, aud: APP_CLIENT.id });
  // UserInfo (the app checks its sub against the ID token's), then the online session check.
  expect(result.userinfo).toMatchObject({ sub, email: WILE.email });
  expect(result.session_check).toMatchObject({ active: true, iss: ACME_ISSUER, client_id: APP_CLIENT.id, sub });

  const refreshed = await appPost(page, "/lifecycle/refresh");
  expect(refreshed.status).toBe(200);
  expect(refreshed.body).toMatchObject({ refresh_token_rotated: true, access_token_changed: true });
  expect(refreshed.body.session_check).toMatchObject({ active: true, iss: ACME_ISSUER, client_id: APP_CLIENT.id, sub });

  // RP-initiated logout at the hostname's end_session_endpoint, back to the app, whose tokens
  // are then dead: the session check answers inactive, introspection too.
  const navigations: string[] = [];
  page.on("request", (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) navigations.push(request.url());
  });
  await page.evaluate(() => {
    const form = document.createElement("form");
    form.method = "post";
    form.action = "/lifecycle/logout";
    document.body.append(form);
    form.submit();
  });
  await page.waitForURL(`${APP}/signed-out`);
  expect(navigations.some((url) => url.startsWith(`${metadata.end_session_endpoint}?`))).toBe(true);
  const signedOut = JSON.parse((await page.getByTestId("sign-out-result").textContent()) ?? "null");
  expect(signedOut.after_logout).toEqual({ access_token: { active: false }, refresh_token: { active: false }, session_check: { status: 401, ok: false } });
});

test("the hostname's tokens and hosted session are its own: refused at the default host, cookies host-only", async ({ page, context }) => {
  // The spec signs in as the application itself (same client, openid-client), to hold the tokens.
  const config = await client.discovery(new URL(ACME_ISSUER), APP_CLIENT.id, undefined, client.ClientSecretBasic(APP_CLIENT.secret), {
    execute: [client.allowInsecureRequests],
    [client.customFetch]: hostFetch,
  });
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const authorizeParams = {
    redirect_uri: `${APP}/callback`,
    scope: "openid email profile",
    state,
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  };
  // The code is read from the browser's way to the callback and redeemed by the spec; the app,
  // which did not start this sign-in, redeems nothing (it answers "Sign-in expired").
  const callbacks: URL[] = [];
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.origin === APP && url.pathname === "/callback") callbacks.push(url);
  });

  const setCookies = setCookiesFrom(page, ACME_HOSTNAME);
  await page.goto(client.buildAuthorizationUrl(config, authorizeParams).href);
  await signInAtHostname(page);
  await expect.poll(() => callbacks.length).toBe(1);
  const tokens = await client.authorizationCodeGrant(config, callbacks[0], { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
  expect(tokens.claims()?.iss).toBe(ACME_ISSUER);

  const bearer = { authorization: `Bearer ${tokens.access_token}` };
  // At the hostname, UserInfo answers; at the default host, the same workspace does not know the token.
  expect((await hostFetch(`${ACME_ISSUER}/oidc/userinfo`, { headers: bearer })).status).toBe(200);
  const atDefaultHost = await fetch(`${ACME_DEFAULT_HOST_ISSUER}/oidc/userinfo`, { headers: bearer });
  expect(atDefaultHost.status).toBe(401);
  expect(atDefaultHost.headers.get("www-authenticate")).toContain("invalid_token");
  expect((await fetch(`${ACME_DEFAULT_HOST_ISSUER}/oidc/session`, { headers: bearer })).status).toBe(401);
  // …nor does its token endpoint take the refresh token.
  const refreshAtDefault = await fetch(`${ACME_DEFAULT_HOST_ISSUER}/oauth2/token`, {
    method: "POST",
    headers: { authorization: `Basic ${Buffer.from(`${APP_CLIENT.id}:${APP_CLIENT.secret}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: tokens.refresh_token! }),
  });
  expect(refreshAtDefault.status).toBe(400);
  expect(((await refreshAtDefault.json()) as { error: string }).error).toBe("invalid_grant");

  // The hosted session's cookie is host-only: no Domain attribute, stored for login.acme.test.
  const sessionCookies = (await setCookies()).filter((header) => header.startsWith("lk_session="));
  expect(sessionCookies.length).toBeGreaterThan(0);
  for (const header of await setCookies()) expect(header, header).not.toMatch(/;\s*domain=/i);
  const stored = (await context.cookies()).find((cookie) => cookie.name === "lk_session");
  expect(stored?.domain).toBe(ACME_HOSTNAME);

  // At the hostname, the session signs the user in again without a form (the control)…
  const authorizeAtHostname = client.buildAuthorizationUrl(config, { ...authorizeParams, state: client.randomState() });
  await page.goto(authorizeAtHostname.href);
  await expect.poll(() => callbacks.length).toBe(2);

  // …while the default host's authorize for the same client shows the sign-in form: the browser
  // sends it no cookie…
  const authorizeAtDefault = new URL(authorizeAtHostname);
  authorizeAtDefault.host = `localhost:${LATCHKEY_PORT}`;
  authorizeAtDefault.searchParams.set("state", client.randomState());
  const cookieSentToDefaultHost = async () => {
    const request = page.waitForRequest((r) => r.url() === authorizeAtDefault.href);
    await page.goto(authorizeAtDefault.href);
    await expect(page).toHaveURL((url) => url.host === `localhost:${LATCHKEY_PORT}`);
    await expect(page.getByLabel("Password", { exact: true })).toBeVisible();
    return ((await (await request).allHeaders()).cookie ?? "").includes(`lk_session=${stored!.value}`);
  };
  expect(await cookieSentToDefaultHost()).toBe(false);
  // …and the cookie, carried over by hand, is no session there either.
  await context.addCookies([{ ...stored!, domain: "localhost" }]);
  expect(await cookieSentToDefaultHost()).toBe(true);
  expect(callbacks).toHaveLength(2);
});

test("a hostname serves its own workspace's issuer only; any other host answers the generic 404", async ({ page }) => {
  const status = async (url: string) => {
    const response = await page.goto(url);
    return { status: response?.status(), body: response?.status() === 404 ? await response.json() : undefined };
  };
  expect((await status(`http://${ACME_HOSTNAME}:${LATCHKEY_PORT}/t/acme/.well-known/openid-configuration`)).status).toBe(200);
  // The console, the landing page and another workspace's issuer are not served at a workspace hostname.
  for (const path of ["/console", "/", "/t/e2e/.well-known/openid-configuration"]) {
    expect(await status(`http://${ACME_HOSTNAME}:${LATCHKEY_PORT}${path}`), path).toEqual({ status: 404, body: GENERIC_404 });
  }
  // A name that reaches the server but is no one's hostname.
  expect(await status(`http://${UNKNOWN_HOSTNAME}:${LATCHKEY_PORT}/t/acme/.well-known/openid-configuration`)).toEqual({ status: 404, body: GENERIC_404 });
  // The same body as an unknown workspace at the default host, which serves acme too.
  expect(await status(`http://localhost:${LATCHKEY_PORT}/t/no-such-workspace/.well-known/openid-configuration`)).toEqual({ status: 404, body: GENERIC_404 });
  const atDefault = await page.goto(`${ACME_DEFAULT_HOST_ISSUER}/.well-known/openid-configuration`);
  expect(await atDefault?.json()).toMatchObject({ issuer: ACME_DEFAULT_HOST_ISSUER });
  expect((await page.goto(`http://localhost:${LATCHKEY_PORT}/console`))?.status()).toBe(200);
});
