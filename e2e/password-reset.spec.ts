/**
 * Self-service password reset end to end (the e2e workspace's file has `password_reset: "email"`):
 * "Forgot your password?" on the hosted sign-in page, the code read from a real SMTP server
 * (e2e/smtp-inbox.ts), a common password refused with why, the new password; the account's other
 * sessions end, and the old password stops working. An account with an authenticator app is asked
 * for its code before the password changes.
 */
import { expect, test, type Browser, type Page } from "@playwright/test";
import { Secret, TOTP } from "otpauth";
import { startCustomerApp, type CustomerAppProcess } from "./customer-app-process";
import { APP, ISSUER, SMTP_PORT } from "./env";
import { codeOf, SmtpInbox } from "./smtp-inbox";

const RESET = { email: "reset@example.com", password: "i forgot this one again" };
const RESET_MFA = { email: "reset-mfa@example.com", password: "my second step guards me" };
const MFA_APP = "http://localhost:3114";

const inbox = new SmtpInbox();
let mfaApp: CustomerAppProcess | undefined;
test.beforeAll(async () => {
  await inbox.listen(SMTP_PORT);
  mfaApp = await startCustomerApp({ port: 3114, clientId: "e2e-mfa", clientSecret: "e2e-mfa-secret-0123456789abcdef0123456789" });
});
test.afterAll(async () => {
  await inbox.close();
  await mfaApp?.stop();
});

async function claimsOn(page: Page): Promise<Record<string, unknown>> {
  return (JSON.parse((await page.getByTestId("result").textContent()) ?? "null") as { id_token: { claims: Record<string, unknown> } }).id_token.claims;
}

/** A fresh browser at the customer app's sign-in; signs in with the password when given one. */
async function signInPage(browser: Browser, app: string, credentials?: { email: string; password: string }): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${app}/start`);
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/`));
  if (credentials) {
    await page.getByLabel("Email", { exact: true }).fill(credentials.email);
    await page.getByLabel("Password", { exact: true }).fill(credentials.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
  }
  return page;
}

/** "Forgot your password?", the address, and the code from the message: the page asks for the new password. */
async function proveMailbox(page: Page, email: string): Promise<void> {
  await page.getByRole("link", { name: "Forgot your password?" }).click();
  await expect(page.getByRole("heading", { name: "Reset your password" })).toBeVisible();
  const since = inbox.messages.length;
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByRole("button", { name: "Send a code" }).click();
  await expect(page.getByRole("heading", { name: "Check your email" })).toBeVisible();
  await expect(page.getByText(`If ${email} has an account with a password, we sent it a 6-digit code to reset it.`)).toBeVisible();
  // The account's security alerts go to the same inbox: the code's message is the one asked for.
  const mail = await inbox.waitFor(email, { since, match: (m) => m.subject.includes("reset your password") });
  expect(mail.subject).toMatch(/^\d{6} is your code to reset your password at E2E$/);
  await page.getByLabel("Code", { exact: true }).fill(codeOf(mail));
  await page.getByRole("button", { name: "Continue" }).click();
  await expect(page.getByRole("heading", { name: "Choose a new password" })).toBeVisible();
}

test("resets a forgotten password with a code by email; a common one is refused, other sessions end, the old password stops working", async ({ browser }) => {
  // Signed in elsewhere before the reset.
  const elsewhere = await signInPage(browser, APP, RESET);
  await elsewhere.waitForURL(`${APP}/profile`);

  const page = await signInPage(browser, APP);
  await proveMailbox(page, RESET.email);
  await page.getByLabel("New password").fill("Password123");
  await page.getByRole("button", { name: "Save the new password" }).click();
  await expect(page.getByLabel("New password")).toHaveAccessibleDescription(/one of the most common ones/);
  await page.getByLabel("New password").fill("a new and better secret");
  await page.getByRole("button", { name: "Save the new password" }).click();
  await expect(page.getByRole("heading", { name: "Your password is changed" })).toBeVisible();
  await expect(page.getByText(/You were signed out everywhere else/)).toBeVisible();
  await page.getByRole("button", { name: "Continue" }).click();
  // e2e-web accepts email codes, so the code that proved the mailbox signs the user in.
  await page.waitForURL(`${APP}/profile`);
  expect((await claimsOn(page)).email).toBe(RESET.email);

  // The other browser's hosted session ended: the sign-in asks again.
  await elsewhere.goto(`${APP}/start`);
  await expect(elsewhere.getByRole("button", { name: "Sign in", exact: true })).toBeVisible();
  // The old password no longer works; the new one does.
  await elsewhere.getByLabel("Email", { exact: true }).fill(RESET.email);
  await elsewhere.getByLabel("Password", { exact: true }).fill(RESET.password);
  await elsewhere.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(elsewhere.getByText("The email or password is incorrect.")).toBeVisible();
  await elsewhere.getByLabel("Password", { exact: true }).fill("a new and better secret");
  await elsewhere.getByRole("button", { name: "Sign in", exact: true }).click();
  await elsewhere.waitForURL(`${APP}/profile`);
});

test("an account with an authenticator app is asked for its code before the password changes", async ({ browser }) => {
  // The account sets up an authenticator app at its first sign-in to the MFA application.
  const setup = await signInPage(browser, MFA_APP, RESET_MFA);
  await setup.getByRole("button", { name: "Set up an authenticator app" }).click();
  const secret = (await setup.locator("#totp-secret").getAttribute("data-secret"))!;
  const code = (offset = 0) => new TOTP({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 }).generate({ timestamp: Date.now() + offset * 30_000 });
  await setup.getByLabel("Code from the app").fill(code());
  await setup.getByRole("button", { name: "Verify and continue" }).click();
  await setup.getByRole("button", { name: "I have saved these codes" }).click();
  await setup.waitForURL(`${MFA_APP}/profile`);

  const page = await signInPage(browser, APP);
  await proveMailbox(page, RESET_MFA.email);
  await page.getByLabel("New password").fill("guarded by two steps now");
  await page.getByRole("button", { name: "Save the new password" }).click();
  await expect(page.getByRole("heading", { name: "Confirm it's you" })).toBeVisible();
  await expect(page.getByText("Before your password changes, confirm it's you with your second step.")).toBeVisible();
  // The setup's step is used: the next one is typed.
  await page.getByLabel("Code from your authenticator app").fill(code(1));
  await page.getByRole("button", { name: "Verify", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Your password is changed" })).toBeVisible();
  await page.getByRole("button", { name: "Continue" }).click();
  await page.waitForURL(`${APP}/profile`);

  // The MFA application takes the new password (and the app's code).
  const again = await signInPage(browser, MFA_APP, { email: RESET_MFA.email, password: "guarded by two steps now" });
  await expect(again.getByRole("heading", { name: "Confirm it's you" })).toBeVisible();
});
