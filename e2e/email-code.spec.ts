/**
 * Email one-time codes end to end: the e2e server sends over SMTP (SMTP_URL, playwright.config.ts)
 * to a real SMTP server started here (e2e/smtp-inbox.ts); the customer application
 * (e2e/customer-app.ts, openid-client) receives tokens whose amr/acr say an email code was used.
 * Password and email-code sign-in also work with JavaScript off.
 */
import { expect, test, type Page } from "@playwright/test";
import { APP, ISSUER, SMTP_PORT } from "./env";
import { codeOf, SmtpInbox } from "./smtp-inbox";

const OTP = { email: "otp@example.com" };
const NO_SCRIPT = { email: "otp-nojs@example.com" };
const ADA = { email: "ada@example.com", password: "correct horse battery staple" };

interface Result {
  id_token: { claims: Record<string, unknown> };
  userinfo: Record<string, unknown>;
}

const inbox = new SmtpInbox();
test.beforeAll(async () => {
  await inbox.listen(SMTP_PORT);
});
test.afterAll(async () => {
  await inbox.close();
});

async function readResult(page: Page): Promise<Result> {
  return JSON.parse((await page.getByTestId("result").textContent()) ?? "null") as Result;
}

/** From the customer app's start to its profile page, by an email code read from the SMTP server. */
async function signInWithEmailCode(page: Page, email: string): Promise<Result> {
  await page.goto(`${APP}/start`);
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/`));
  await page.getByLabel("Email", { exact: true }).fill(email);
  const since = inbox.messages.length;
  await page.getByRole("button", { name: "Email me a sign-in code" }).click();
  await expect(page.getByRole("heading", { name: "Check your email" })).toBeVisible();
  await expect(page.getByText(email)).toBeVisible();
  const mail = await inbox.waitFor(email, { since });
  await page.getByLabel("Code", { exact: true }).fill(codeOf(mail));
  await page.getByRole("button", { name: "Continue" }).click();
  await page.waitForURL(`${APP}/profile`);
  return readResult(page);
}

test("signs in with a code sent over SMTP: the tokens say amr otp, acr loa:1, and the address is verified", async ({ page }) => {
  const result = await signInWithEmailCode(page, OTP.email);
  const { claims } = result.id_token;
  expect(claims.iss).toBe(ISSUER);
  expect(claims.email).toBe(OTP.email);
  expect(claims.amr).toEqual(["otp"]);
  expect(claims.acr).toBe("urn:latchkey:loa:1");
  // The fixture's user was unverified: a code that reached the inbox proves the address.
  expect(claims.email_verified).toBe(true);
  expect(result.userinfo.email_verified).toBe(true);

  const mail = inbox.messages.find((m) => m.to.includes(OTP.email))!;
  expect(mail.subject).toMatch(/^\d{6} is your sign-in code for E2E$/);
  expect(mail.text).toContain(codeOf(mail));
  expect(mail.html).toContain(codeOf(mail));
});

test("a wrong code is refused on the page, and 'another way' goes back to the methods", async ({ page }) => {
  await page.goto(`${APP}/start`);
  await page.getByLabel("Email", { exact: true }).fill("nobody@example.com");
  await page.getByRole("button", { name: "Email me a sign-in code" }).click();
  // An address without an account: the same step, no message.
  await expect(page.getByRole("heading", { name: "Check your email" })).toBeVisible();
  await page.getByLabel("Code", { exact: true }).fill("123456");
  await page.getByRole("button", { name: "Continue" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "The code is incorrect" })).toBeVisible();
  await page.getByRole("button", { name: "Use another way to sign in" }).click();
  await expect(page.getByLabel("Password", { exact: true })).toBeVisible();
  expect(inbox.messages.some((m) => m.to.includes("nobody@example.com"))).toBe(false);
});

test.describe("with JavaScript off", () => {
  test.use({ javaScriptEnabled: false });

  test("the password sign-in works", async ({ page }) => {
    await page.goto(`${APP}/start`);
    await page.getByLabel("Email", { exact: true }).fill(ADA.email);
    await page.getByLabel("Password", { exact: true }).fill(ADA.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL(`${APP}/profile`);
    const { claims } = (await readResult(page)).id_token;
    expect(claims.email).toBe(ADA.email);
    expect(claims.amr).toEqual(["pwd"]);
  });

  test("the email-code sign-in works", async ({ page }) => {
    const { claims } = (await signInWithEmailCode(page, NO_SCRIPT.email)).id_token;
    expect(claims.email).toBe(NO_SCRIPT.email);
    expect(claims.amr).toEqual(["otp"]);
    expect(claims.acr).toBe("urn:latchkey:loa:1");
  });
});
