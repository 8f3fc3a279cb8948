/**
 * Self-service sign-up end to end (e2e-web's policy has sign_up on): the address confirmed by a
 * code read from a real SMTP server (e2e/smtp-inbox.ts), then a password; the customer application
 * (openid-client) gets the new account's verified email and amr/acr of the email code; a common
 * password is refused at sign-up with why (the workspace screens new passwords). A
 * registered address looks the same on the page; its owner's message carries a sign-in code.
 */
import { expect, test, type Page } from "@playwright/test";
import { APP, ISSUER, SMTP_PORT } from "./env";
import { codeOf, SmtpInbox } from "./smtp-inbox";

const REGISTERED = { email: "registered@example.com" };

const inbox = new SmtpInbox();
test.beforeAll(async () => {
  await inbox.listen(SMTP_PORT);
});
test.afterAll(async () => {
  await inbox.close();
});

async function claimsOn(page: Page): Promise<Record<string, unknown>> {
  return (JSON.parse((await page.getByTestId("result").textContent()) ?? "null") as { id_token: { claims: Record<string, unknown> } }).id_token.claims;
}

/** From the customer app's start through "Create an account" to the code step; returns the message. */
async function startSignUp(page: Page, email: string) {
  await page.goto(`${APP}/start`);
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/`));
  await page.getByRole("link", { name: "Create an account" }).click();
  await expect(page.getByRole("heading", { name: /^Create your account/ })).toBeVisible();
  const since = inbox.messages.length;
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByRole("button", { name: "Continue" }).click();
  await expect(page.getByRole("heading", { name: "Check your email" })).toBeVisible();
  return inbox.waitFor(email, { since });
}

test("signs up with an email confirmed by a code, then a password; the new account signs in with it", async ({ page }) => {
  const email = `new-${Date.now()}@example.com`;
  const mail = await startSignUp(page, email);
  expect(mail.subject).toMatch(/^\d{6} is your code to create an account at E2E$/);

  await page.getByLabel("Code", { exact: true }).fill(codeOf(mail));
  await page.getByRole("button", { name: "Continue" }).click();
  await expect(page.getByRole("heading", { name: "Choose how you will sign in" })).toBeVisible();
  // A refused password (the browser's own length check set aside) is said under the field, in its hint's place: not both.
  await expect(page.getByText("At least 8 characters.", { exact: true })).toBeVisible();
  await page.getByLabel("Choose a password").evaluate((input) => input.removeAttribute("minlength"));
  await page.getByLabel("Choose a password").fill("short");
  await page.getByRole("button", { name: "Create account", exact: true }).click();
  await expect(page.getByText("Choose a password of at least 8 characters.")).toHaveCount(1);
  await expect(page.getByText("At least 8 characters.", { exact: true })).toHaveCount(0);
  await expect(page.getByLabel("Choose a password")).toHaveAccessibleDescription("Choose a password of at least 8 characters.");
  // The workspace screens new passwords (its file's password_screening): a common one is refused with why, under the field.
  await page.getByLabel("Choose a password").fill("Password123");
  await page.getByRole("button", { name: "Create account", exact: true }).click();
  await expect(page.getByLabel("Choose a password")).toHaveAccessibleDescription(/one of the most common ones/);
  await expect(page.getByText("At least 8 characters.", { exact: true })).toHaveCount(0);
  await page.getByLabel("Choose a password").fill("my brand new password");
  await page.getByRole("button", { name: "Create account", exact: true }).click();
  await page.waitForURL(`${APP}/profile`);

  const claims = await claimsOn(page);
  expect(claims.email).toBe(email);
  expect(claims.email_verified).toBe(true);
  expect(claims.amr).toEqual(["otp"]);
  expect(claims.acr).toBe("urn:latchkey:loa:1");

  // Signed out, the new account signs in with its password.
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(`${APP}/signed-out`);
  await page.goto(`${APP}/start`);
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill("my brand new password");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(`${APP}/profile`);
  const again = await claimsOn(page);
  expect(again.sub).toBe(claims.sub);
  expect(again.amr).toEqual(["pwd"]);
});

test("a registered address: the same code step; the message says the account exists, and its code signs in", async ({ page }) => {
  const mail = await startSignUp(page, REGISTERED.email);
  expect(mail.subject).toMatch(/^\d{6} is your sign-in code for E2E$/);
  expect(mail.text).toContain("already has one");
  await page.getByLabel("Code", { exact: true }).fill(codeOf(mail));
  await page.getByRole("button", { name: "Continue" }).click();
  await page.waitForURL(`${APP}/profile`);
  const claims = await claimsOn(page);
  expect(claims.email).toBe(REGISTERED.email);
  expect(claims.amr).toEqual(["otp"]);
});
