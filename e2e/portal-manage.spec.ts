/**
 * What the account-security portal manages, at phone width in Chromium:
 *
 * - with a CDP virtual authenticator: add a passkey, rename it, confirm with it, create recovery
 *   codes (shown once), then remove the passkey; every page fits the screen;
 * - with the example application (e2e/customer-app.ts, openid-client) for e2e-account on port
 *   3117: a refresh token presented twice shows up as a security alert in the portal, and "sign
 *   out of this application" makes the application's next session check inactive.
 */
import { startCustomerApp, type CustomerAppProcess } from "./customer-app-process";
import { expect, test, type Page } from "@playwright/test";
import { ISSUER } from "./env";

const PHONE = { width: 360, height: 740 };
const CLIENT_ID = "e2e-account";
const USER = { email: "manage@example.com", password: "what I manage is my own" };

const APP_PORT = 3117;
const APP = `http://localhost:${APP_PORT}`;

test.use({ viewport: PHONE, isMobile: true, hasTouch: true });

let app: CustomerAppProcess | undefined;

test.beforeAll(async () => {
  app = await startCustomerApp({ port: APP_PORT, clientId: CLIENT_ID, clientSecret: "e2e-account-secret-0123456789abcdef0123456789" });
});

test.afterAll(async () => {
  await app?.stop();
});

/** Signs in to the example application (the hosted session is reused when the browser has one). */
async function signInToApp(page: Page): Promise<void> {
  await page.goto(`${APP}/start`);
  if (new URL(page.url()).pathname.endsWith("/sign-in")) {
    await page.getByLabel("Email", { exact: true }).fill(USER.email);
    await page.getByLabel("Password", { exact: true }).fill(USER.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
  }
  await expect(page).toHaveURL(`${APP}/profile`);
}

/** Two refreshes of the application's stored token at once: both present the same token, so one of them is a reuse. */
async function refreshTwiceAtOnce(page: Page): Promise<number[]> {
  return page.evaluate(async () => {
    const post = () => fetch("/lifecycle/refresh", { method: "POST" }).then((r) => r.status);
    return Promise.all([post(), post()]);
  });
}

async function fitsTheScreen(page: Page): Promise<void> {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
}

test("passkey added, renamed and removed, recovery codes shown once, at phone width", async ({ page }) => {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });

  await page.goto(`${ISSUER}/auth/account?client_id=${CLIENT_ID}`);
  await page.getByLabel("Email", { exact: true }).fill(USER.email);
  await page.getByLabel("Password", { exact: true }).fill(USER.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page).toHaveURL(`${ISSUER}/account`);
  await expect(page.getByRole("heading", { name: "Sign-in methods" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Application sessions" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Security alerts" })).toBeVisible();
  await fitsTheScreen(page);

  // Just signed in with the password: adding needs nothing more.
  await page.getByRole("button", { name: "Add a passkey" }).click();
  await expect(page.getByText("Passkey added.")).toBeVisible();
  expect((await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials).toHaveLength(1);
  await fitsTheScreen(page);

  // With a passkey the account has MFA: the next change asks for it.
  await page.getByRole("button", { name: "Use a passkey or security key" }).click();
  await expect(page.getByText("Thanks, you are confirmed for 10 minutes.")).toBeVisible();

  await page.getByText("Rename", { exact: true }).click();
  await page.getByLabel("New name").fill("My phone");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("Renamed.")).toBeVisible();
  await expect(page.getByText("My phone", { exact: true })).toBeVisible();

  // Recovery codes: shown once, until saved.
  await page.getByRole("button", { name: "Create recovery codes" }).click();
  await expect(page.getByText("They will not be shown again.")).toBeVisible();
  const codes = page.locator("ol li");
  await expect(codes).toHaveCount(10);
  await fitsTheScreen(page);
  await page.getByRole("button", { name: "I have saved them" }).click();
  await expect(page.locator("ol li")).toHaveCount(0);
  await expect(page.getByText("10 of 10 codes left", { exact: false })).toBeVisible();

  // Removing the passkey: the confirmation with the passkey is still fresh.
  await page.getByRole("button", { name: "Remove" }).click();
  await expect(page.getByText("Removed.")).toBeVisible();
  await expect(page.getByText("My phone", { exact: true })).toHaveCount(0);
  await fitsTheScreen(page);
});

test("a reused refresh token is a security alert in the portal; signing out of the application ends its session check", async ({ page }) => {
  await signInToApp(page);
  // One rotation wins; the other presentation is a reuse, which ends the whole sign-in. (Should the
  // two ever run one after the other, both succeed and the pair is simply tried again.)
  let statuses: number[] = [];
  for (let attempt = 0; attempt < 3 && !statuses.includes(401); attempt++) statuses = await refreshTwiceAtOnce(page);
  expect(statuses.sort()).toEqual([200, 401]);

  // A new sign-in to the application (the hosted session is reused), then the portal by the direct link.
  await signInToApp(page);
  await page.goto(`${ISSUER}/auth/account?client_id=${CLIENT_ID}`);
  await expect(page).toHaveURL(`${ISSUER}/account`);
  await expect(page.getByText("Possible stolen sign-in: E2E account app")).toBeVisible();
  await fitsTheScreen(page);

  const sessions = page.locator("section", { has: page.getByRole("heading", { name: "Application sessions" }) });
  await expect(sessions.getByText("E2E account app")).toHaveCount(1);
  await sessions.getByRole("button", { name: "Sign out of this application" }).click();
  await expect(page.getByText("Signed out of the application.")).toBeVisible();
  await expect(page.getByText("You are not signed in to any application.")).toBeVisible();

  // The application's next online session check says the session is over.
  const response = await page.goto(`${APP}/profile`);
  expect(response!.status()).toBe(401);
  await expect(page.getByText("Your session has ended.")).toBeVisible();
});
