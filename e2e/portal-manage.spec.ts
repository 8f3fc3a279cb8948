/**
 * What the account-security portal manages, at phone width in Chromium with a CDP virtual
 * authenticator: add a passkey, rename it, confirm with it, create recovery codes (shown once),
 * then remove the passkey; every page fits the screen.
 */
import { expect, test, type Page } from "@playwright/test";
import { ISSUER } from "./env";

const PHONE = { width: 360, height: 740 };
const CLIENT_ID = "e2e-account";
const USER = { email: "manage@example.com", password: "what I manage is my own" };

test.use({ viewport: PHONE, isMobile: true, hasTouch: true });

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
