/**
 * Step-up evidence in the account-security portal lasts ten minutes, on the server's clock: after a
 * confirmation, a change goes through; eleven minutes later (the e2e server's clock moved with
 * shiftServerClock) the same change asks for a fresh confirmation first.
 */
import { expect, test } from "@playwright/test";
import { ISSUER, shiftServerClock } from "./env";

const CLIENT_ID = "e2e-account";
const USER = { email: "evidence@example.com", password: "ten minutes of confidence" };

test.afterAll(async () => {
  await shiftServerClock(0);
});

test("removing a factor asks for a fresh confirmation once ten minutes have passed", async ({ page }) => {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });

  await page.goto(`${ISSUER}/auth/account?client_id=${CLIENT_ID}`);
  await page.getByLabel("Email", { exact: true }).fill(USER.email);
  await page.getByLabel("Password", { exact: true }).fill(USER.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page).toHaveURL(`${ISSUER}/account`);

  // Just signed in with the password: adding a passkey needs nothing more.
  await page.getByRole("button", { name: "Add a passkey" }).click();
  await expect(page.getByText("Passkey added.")).toBeVisible();
  // Confirm with the passkey (the account now has MFA): fresh for ten minutes.
  await page.getByRole("button", { name: "Use a passkey or security key" }).click();
  await expect(page.getByText("Thanks, you are confirmed for 10 minutes.")).toBeVisible();
  await expect(page.getByText("You recently confirmed it's you")).toBeVisible();

  // Eleven minutes later the confirmation is stale (the portal session, 30 minutes, still holds).
  await shiftServerClock(11 * 60_000);
  await page.reload();
  await expect(page.getByText("You recently confirmed it's you")).toHaveCount(0);
  await page.getByRole("button", { name: "Remove" }).click();
  await expect(page.getByText("Removed.")).toHaveCount(0);
  await expect(page.getByRole("alert").filter({ hasText: "needs a recent verification" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Confirm it's you" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Remove" })).toBeVisible();

  // A fresh confirmation (the passkey: primary and multi-factor at once), then the removal goes through.
  await page.getByRole("button", { name: "Use a passkey", exact: true }).click();
  await expect(page.getByText("Thanks, you are confirmed for 10 minutes.")).toBeVisible();
  await page.getByRole("button", { name: "Remove" }).click();
  await expect(page.getByText("Removed.")).toBeVisible();
});
