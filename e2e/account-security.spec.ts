/**
 * The account-security portal end to end, from the example customer application
 * (e2e/customer-app.ts, openid-client) of e2e-account, the fixture's application that offers the
 * portal, on port 3117, with the fixture's handoff*@example.com users (one per flow that changes
 * the account):
 *
 * - the dashboard's "Security settings" button (the backend handoff) and direct link; the start
 *   route's CSRF proof and the callback's checks on the customer side;
 * - the handoff when the browser's hosted cookie is the user's session: the portal opens at once,
 *   the customer's callback is never called; back to the registered return page;
 * - the handoff in a browser without that hosted session: refused at the launch URL (the
 *   completion would need the launch's own session);
 * - launch refusals: a revoked grant (REAUTHENTICATION_REQUIRED: the application ends its session),
 *   an application without the portal (NOT_AVAILABLE; its direct link: "Not available");
 * - the direct link;
 * - the handoff when the session does not meet the application's policy (changed to require two
 *   steps after the sign-in): the user steps up, the service calls the customer's callback, the
 *   customer approves and the completion URL opens the portal;
 * - in the portal opened by the handoff: a passkey added (CDP virtual authenticator), then the next
 *   change confirmed with it; "sign out of this application" (the application's next session
 *   check says inactive); a reused refresh token shown as a security alert.
 */
import { execFile } from "node:child_process";
import { startCustomerApp, type CustomerAppProcess } from "./customer-app-process";
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, test, type BrowserContext, type Page } from "@playwright/test";
import { Secret, TOTP } from "otpauth";
import { APP as WEB_APP, ISSUER } from "./env";
import { importWorkspacePart } from "./workspace-import";

const APP_PORT = 3117;
const APP = `http://localhost:${APP_PORT}`;
const CLIENT_ID = "e2e-account";
const CLIENT_SECRET = "e2e-account-secret-0123456789abcdef0123456789";
const APP_NAME = "E2E account app";
const USER = { email: "handoff@example.com", password: "my dashboard hands me over" };
/** The default example application (e2e-web, port 3112) does not offer the portal. */
const ADA = { email: "ada@example.com", password: "correct horse battery staple" };
// One user per flow that changes the account, so that the flows do not depend on each other's order.
const STEP_UP_USER = { email: "handoff-step-up@example.com", password: "asked for more after signing in" };
const PASSKEY_USER = { email: "handoff-passkey@example.com", password: "a passkey from my dashboard" };
const SESSIONS_USER = { email: "handoff-sessions@example.com", password: "signed in to two applications" };
const ALERTS_USER = { email: "handoff-alerts@example.com", password: "someone reused my refresh token" };
const DIRECT_LINK = `${ISSUER}/auth/account?client_id=${CLIENT_ID}`;
/** The hosted session's cookie on the authentication host (lib/authn/hosted-session.ts). */
const HOSTED_COOKIE = "lk_session";

const fixture = JSON.parse(readFileSync(path.join(process.cwd(), "e2e/fixtures/e2e-workspace.json"), "utf8")) as {
  id: string;
  name: string;
  applications: { client_id: string; auth_policy?: Record<string, unknown> }[];
};
const accountApp = fixture.applications.find((a) => a.client_id === CLIENT_ID)!;

let app: CustomerAppProcess | undefined;

test.beforeAll(async () => {
  app = await startCustomerApp({ port: APP_PORT, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
});

test.afterAll(async () => {
  await app?.stop();
});

/** The application's sign-in policy, changed by importing the workspace file with it (the CLI, on the server's data store). */
async function setAccountAppPolicy(policy: Record<string, unknown> | undefined): Promise<void> {
  await importWorkspacePart({ applications: [{ ...accountApp, ...(policy ? { auth_policy: policy } : {}) }] });
}

/** The authenticator app's current code for `secret`. */
function totp(secret: string): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 }).generate();
}

/** Every top-level navigation of the page, in order. */
function recordNavigations(page: Page): string[] {
  const urls: string[] = [];
  page.on("request", (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) urls.push(request.url());
  });
  return urls;
}

interface User {
  email: string;
  password: string;
}

async function passwordStep(page: Page, user: User = USER): Promise<void> {
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/`));
  await page.getByLabel("Email", { exact: true }).fill(user.email);
  await page.getByLabel("Password", { exact: true }).fill(user.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

/** Signs in to the example application: its profile page (the dashboard). */
async function signIn(page: Page, user: User = USER): Promise<void> {
  await page.goto(`${APP}/start`);
  await passwordStep(page, user);
  await page.waitForURL(`${APP}/profile`);
}

/** Drops the authentication host's session cookie only: the application's session stays. */
async function forgetHostedCookie(context: BrowserContext): Promise<void> {
  await context.clearCookies({ name: HOSTED_COOKIE });
}

async function expectPortal(page: Page, user: User = USER): Promise<void> {
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/`));
  await expect(page.getByRole("heading", { level: 1, name: "Security settings" })).toBeVisible();
  await expect(page.getByText(user.email, { exact: true })).toBeVisible();
}

async function backToTheApplication(page: Page, user: User = USER): Promise<void> {
  await page.getByRole("link", { name: `Back to ${APP_NAME}` }).click();
  await page.waitForURL(`${APP}/settings/security`);
  await expect(page.getByRole("heading", { name: "Account settings" })).toBeVisible();
  await expect(page.getByTestId("settings-user")).toHaveText(user.email);
}

test("the dashboard: the Security settings button needs the session's CSRF proof, the direct link names the client; the callback takes only what this session started", async ({ page }) => {
  await signIn(page);
  await expect(page.getByRole("button", { name: "Security settings" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Security settings (direct link)" })).toHaveAttribute("href", DIRECT_LINK);

  // The start route: a same-origin POST without the session's CSRF proof is refused, and so is a
  // POST with the proof from outside the application's pages (no Origin, no Sec-Fetch-Site).
  const withoutProof = await page.evaluate(async () => {
    const response = await fetch("/account-security/start", { method: "POST", body: new URLSearchParams({ csrf: "not-the-proof" }), redirect: "manual" });
    return response.status;
  });
  expect(withoutProof).toBe(403);
  const proof = await page.locator('form[action="/account-security/start"] input[name="csrf"]').inputValue();
  expect(proof).toMatch(/^[A-Za-z0-9_-]{43}$/);
  const fromElsewhere = await page.request.post(`${APP}/account-security/start`, { form: { csrf: proof }, maxRedirects: 0 });
  expect(fromElsewhere.status()).toBe(403);

  // The callback: a state this session never launched, a missing or repeated parameter, an extra
  // one: refused, without caching and without a referrer.
  const state = "A".repeat(43);
  for (const query of [
    `challenge=c&state=${state}&intent=manage`,
    `state=${state}&intent=manage`,
    `challenge=c&challenge=d&state=${state}&intent=manage`,
    `challenge=c&state=${state}&intent=manage&next=/profile`,
  ]) {
    const response = await page.goto(`${APP}/account-security/callback?${query}`);
    expect(response!.status()).toBe(400);
    expect(response!.headers()["cache-control"]).toBe("no-store");
    expect(response!.headers()["referrer-policy"]).toBe("no-referrer");
    await expect(page.getByRole("alert")).toHaveText("The security settings could not be opened.");
  }
});

test("handoff with the hosted session in the browser: the portal opens at once, the callback is not called; back to the return page", async ({ page }) => {
  await signIn(page);
  const navigations = recordNavigations(page);
  await page.getByRole("button", { name: "Security settings" }).click();
  await expectPortal(page);

  // Start → 303 launch_url on the issuer → the portal; the customer's callback stayed out of it.
  expect(navigations[0]).toBe(`${APP}/account-security/start`);
  expect(navigations[1]?.startsWith(`${ISSUER}/auth/account/`)).toBe(true);
  expect(navigations.filter((url) => url.startsWith(`${APP}/account-security/callback`))).toEqual([]);

  await backToTheApplication(page);
});

test("handoff in a browser without the user's hosted session: refused at the launch URL, before any sign-in; the callback is not called", async ({ page, context }) => {
  await signIn(page);
  await forgetHostedCookie(context);
  const navigations = recordNavigations(page);
  await page.getByRole("button", { name: "Security settings" }).click();
  await expect(page.getByRole("heading", { name: "Different sign-in" })).toBeVisible();
  expect(page.url().startsWith(`${ISSUER}/auth/account/`)).toBe(true);
  expect(navigations.filter((url) => url.startsWith(`${APP}/account-security/callback`))).toEqual([]);
});

test("launch refusals reach the user as the application's own pages: REAUTHENTICATION_REQUIRED ends the local session, NOT_AVAILABLE says so", async ({ page, browser }) => {
  // The grant ends (the application revokes its refresh token): the token the application still
  // holds is refused at launch, so the application ends its session and asks for a new sign-in.
  await signIn(page);
  const revoked = await page.evaluate(async () => (await fetch("/lifecycle/revoke", { method: "POST" })).status);
  expect(revoked).toBe(200);
  await page.getByRole("button", { name: "Security settings" }).click();
  await expect(page.getByRole("heading", { name: "Please sign in again" })).toBeVisible();
  expect(page.url()).toBe(`${APP}/account-security/start`);
  expect((await page.context().cookies(APP)).map((c) => c.name)).not.toContain("app_session");

  // An application that does not offer the portal (e2e-web, the default example application):
  // launch answers NOT_AVAILABLE, and the direct link shows the hosted "not available" page.
  const other = await (await browser.newContext()).newPage();
  await other.goto(`${WEB_APP}/start`);
  await other.getByLabel("Email", { exact: true }).fill(ADA.email);
  await other.getByLabel("Password", { exact: true }).fill(ADA.password);
  await other.getByRole("button", { name: "Sign in", exact: true }).click();
  await other.waitForURL(`${WEB_APP}/profile`);
  await other.getByRole("button", { name: "Security settings" }).click();
  await expect(other.getByRole("alert")).toHaveText("Security settings are not available for this application.");
  await other.goto(`${WEB_APP}/profile`);
  await other.getByRole("link", { name: "Security settings (direct link)" }).click();
  await expect(other.getByRole("heading", { name: "Not available" })).toBeVisible();
  await other.context().close();
});

test("the direct link: the portal on the authentication host, then back to the application", async ({ page }) => {
  await signIn(page);
  await page.getByRole("link", { name: "Security settings (direct link)" }).click();
  await expectPortal(page);
  await page.getByRole("link", { name: `Back to ${APP_NAME}` }).click();
  await expect(page).toHaveURL((url) => url.origin === APP);
});

test("handoff when the application's policy asks for more than the session has: step-up, the service calls the application's callback, approve, the completion URL opens the portal", async ({ page }) => {
  await signIn(page, STEP_UP_USER);
  // The application now requires two-step verification, which this session (a password) lacks.
  await setAccountAppPolicy({ mfa: "required" });
  try {
    const navigations = recordNavigations(page);
    await page.getByRole("button", { name: "Security settings" }).click();
    await expect(page.getByRole("heading", { name: "Set up two-step verification" })).toBeVisible();
    await page.getByRole("button", { name: "Set up an authenticator app" }).click();
    const secret = (await page.locator("#totp-secret").getAttribute("data-secret"))!;
    await page.getByLabel("Code from the app").fill(totp(secret));
    await page.getByRole("button", { name: "Verify and continue" }).click();
    await expect(page.getByRole("heading", { name: "Save your recovery codes" })).toBeVisible();
    await page.getByRole("button", { name: "I have saved these codes" }).click();
    await expectPortal(page, STEP_UP_USER);

    // The service called the registered callback with exactly challenge, state and intent; the
    // application approved and sent the browser to the completion URL, on the issuer.
    const callbacks = navigations.filter((url) => url.startsWith(`${APP}/account-security/callback`));
    expect(callbacks).toHaveLength(1);
    const callback = new URL(callbacks[0]!);
    expect([...callback.searchParams.keys()].sort()).toEqual(["challenge", "intent", "state"]);
    expect(callback.searchParams.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(callback.searchParams.get("intent")).toBe("manage");
    expect(navigations[navigations.indexOf(callbacks[0]!) + 1]?.startsWith(`${ISSUER}/auth/account/complete?`)).toBe(true);
    await backToTheApplication(page, STEP_UP_USER);

    // The callback URL again (a reload, a forwarded link): the pending record was consumed.
    const replay = await page.goto(callback.href);
    expect(replay!.status()).toBe(400);
  } finally {
    await setAccountAppPolicy(undefined);
  }
});

test("handoff → portal → add a passkey (virtual authenticator) → the next change asks to confirm with it → Done: back to the application", async ({ page }) => {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });

  await signIn(page, PASSKEY_USER);
  await page.getByRole("button", { name: "Security settings" }).click();
  await expectPortal(page, PASSKEY_USER);

  // The password sign-in a moment ago is recent primary verification, and the account has no
  // second factor yet: adding a passkey needs nothing more.
  await page.getByRole("button", { name: "Add a passkey" }).click();
  await expect(page.getByText("Passkey added.")).toBeVisible();
  expect((await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials).toHaveLength(1);

  // Now the account has MFA: creating recovery codes asks for the passkey first.
  await page.getByRole("button", { name: "Use a passkey or security key" }).click();
  await expect(page.getByText("Thanks, you are confirmed for 10 minutes.")).toBeVisible();
  await page.getByRole("button", { name: "Create recovery codes" }).click();
  await expect(page.locator("ol li")).toHaveCount(10);
  await page.getByRole("button", { name: "I have saved them" }).click();
  await expect(page.getByText("10 of 10 codes left", { exact: false })).toBeVisible();

  // "Done": the portal session ends and the browser is back on the registered return page.
  await page.getByRole("button", { name: `Done: back to ${APP_NAME}` }).click();
  await page.waitForURL(`${APP}/settings/security`);
  await expect(page.getByTestId("settings-user")).toHaveText(PASSKEY_USER.email);
  await page.goto(`${ISSUER}/account`);
  await expect(page.getByRole("heading", { name: "Your security settings session has ended" })).toBeVisible();
});

test("application sessions: 'sign out of this application' makes that application's next session check inactive", async ({ page, browser }) => {
  // The user is signed in to two applications: the default example application (e2e-web) in
  // another browser, and the example application that offers the portal (e2e-account) here. (The
  // two example applications share cookie names on localhost, hence two browsers.)
  const elsewhere = await (await browser.newContext()).newPage();
  await elsewhere.goto(`${WEB_APP}/start`);
  await passwordStep(elsewhere, SESSIONS_USER);
  await elsewhere.waitForURL(`${WEB_APP}/profile`);

  await signIn(page, SESSIONS_USER);
  await page.getByRole("button", { name: "Security settings" }).click();
  await expectPortal(page, SESSIONS_USER);
  const sessions = page.locator("section", { has: page.getByRole("heading", { name: "Application sessions" }) });
  const web = sessions.getByRole("listitem").filter({ hasText: "E2E web" });
  const account = sessions.getByRole("listitem").filter({ hasText: APP_NAME });
  await expect(web).toHaveCount(1);
  await expect(account).toHaveCount(1);
  await expect(account).toContainText("you came from here");

  // The other application: its grant and tokens end; the portal stays open.
  await web.getByRole("button", { name: "Sign out of this application" }).click();
  await expect(page.getByText("Signed out of the application.")).toBeVisible();
  await expect(web).toHaveCount(0);
  await elsewhere.goto(`${WEB_APP}/profile`);
  await expect(elsewhere.getByRole("heading", { name: "Session ended" })).toBeVisible();
  await elsewhere.context().close();

  // The application the user came from: its session check says inactive too.
  await account.getByRole("button", { name: "Sign out of this application" }).click();
  await page.goto(`${APP}/profile`);
  await expect(page.getByRole("heading", { name: "Session ended" })).toBeVisible();
});

test("a reused refresh token shows up as a security alert in the portal", async ({ page }) => {
  // A sign-in of the example application's client whose tokens the test holds itself: the browser
  // authorizes (its hosted session answers at once after the first sign-in), and the example
  // application's callback, which does not know this transaction, leaves the code alone.
  await signIn(page, ALERTS_USER);
  const verifier = randomBytes(32).toString("base64url");
  const authorize = new URL(`${ISSUER}/oauth2/authorize`);
  authorize.search = new URLSearchParams({
    response_type: "code",
    client_id: CLIENT_ID,
    redirect_uri: `${APP}/callback`,
    scope: "openid email profile",
    state: randomBytes(24).toString("base64url"),
    nonce: randomBytes(24).toString("base64url"),
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  }).toString();
  await page.goto(authorize.href);
  await page.waitForURL((url) => url.href.startsWith(`${APP}/callback?`));
  const code = new URL(page.url()).searchParams.get("code")!;
  const first = await token({ grant_type: "authorization_code", code, redirect_uri: `${APP}/callback`, code_verifier: verifier });
  expect(first.status).toBe(200);
  const stolen = first.body.refresh_token as string;
  const rotated = await token({ grant_type: "refresh_token", refresh_token: stolen });
  expect(rotated.status).toBe(200);
  // The replaced refresh token, presented again: refused, and the family ends as possible theft.
  const reused = await token({ grant_type: "refresh_token", refresh_token: stolen });
  expect(reused.body.error).toBe("invalid_grant");

  await page.goto(DIRECT_LINK);
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/`));
  if (!(await page.getByRole("heading", { level: 1, name: "Security settings" }).isVisible())) {
    // The hosted session may have ended with the family: sign in again.
    if (await page.getByLabel("Password", { exact: true }).isVisible()) await passwordStep(page, ALERTS_USER);
  }
  await expectPortal(page, ALERTS_USER);
  const alerts = page.locator("section", { has: page.getByRole("heading", { name: "Security alerts" }) });
  await expect(alerts.getByRole("alert")).toHaveCount(1);
  await expect(alerts.getByRole("alert")).toContainText(`Possible stolen sign-in: ${APP_NAME}`);
});

/** A token request of the example application's client (HTTP Basic), as a server makes it. */
async function token(form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const basic = Buffer.from(`${encodeURIComponent(CLIENT_ID)}:${encodeURIComponent(CLIENT_SECRET)}`).toString("base64");
  const response = await fetch(`${ISSUER}/oauth2/token`, {
    method: "POST",
    headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
