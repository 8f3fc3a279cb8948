/**
 * Two-step verification end to end: an application whose policy requires MFA (e2e-mfa in the
 * fixture), the example customer app (openid-client) as its client on port 3114. The first
 * sign-in enrols an authenticator app (the test computes the codes from the key the page shows)
 * and shows recovery codes; the next sign-in asks for a code; a recovery code works once.
 */
import { startCustomerApp, type CustomerAppProcess } from "./customer-app-process";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { Secret, TOTP } from "otpauth";
import { ISSUER } from "./env";

const MFA_APP_PORT = 3114;
const MFA_APP = `http://localhost:${MFA_APP_PORT}`;
const USER = { email: "mfa@example.com", password: "two steps are better than one" };

interface Result {
  id_token: { claims: Record<string, unknown> };
}

let app: CustomerAppProcess | undefined;

test.beforeAll(async () => {
  app = await startCustomerApp({ port: MFA_APP_PORT, clientId: "e2e-mfa", clientSecret: "e2e-mfa-secret-0123456789abcdef0123456789" });
});

test.afterAll(async () => {
  await app?.stop();
});

/** The authenticator app's code for `secret`, `offset` steps from now. */
function code(secret: string, offset = 0): string {
  const totp = new TOTP({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 });
  return totp.generate({ timestamp: Date.now() + offset * 30_000 });
}

/** A fresh browser (no hosted session): the customer app's /start, then the password. */
async function passwordStep(browser: Browser): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${MFA_APP}/start`);
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/`));
  await page.getByLabel("Email", { exact: true }).fill(USER.email);
  await page.getByLabel("Password", { exact: true }).fill(USER.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  return page;
}

async function readResult(page: Page): Promise<Result> {
  await page.waitForURL(`${MFA_APP}/profile`);
  return JSON.parse((await page.getByTestId("result").textContent()) ?? "null") as Result;
}

test("MFA required: enrol an authenticator app, sign in with a code, then with a recovery code once", async ({ browser }) => {
  // First sign-in: no second factor yet, so one is set up before the application gets a code.
  const first = await passwordStep(browser);
  await expect(first.getByRole("heading", { name: "Set up two-step verification" })).toBeVisible();
  await first.getByRole("button", { name: "Set up an authenticator app" }).click();
  await expect(first.getByRole("img", { name: "QR code for your authenticator app" })).toBeVisible();
  const secret = (await first.locator("#totp-secret").getAttribute("data-secret"))!;
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  // The key as shown, in groups of four, is the same key.
  expect((await first.locator("#totp-secret").textContent())!.replace(/\s/g, "")).toBe(secret);

  await first.getByLabel("Code from the app").fill("000000" === code(secret) ? "111111" : "000000");
  await first.getByRole("button", { name: "Verify and continue" }).click();
  await expect(first.getByRole("alert").filter({ hasText: "The code is incorrect" })).toBeVisible();

  await first.getByLabel("Code from the app").fill(code(secret));
  await first.getByRole("button", { name: "Verify and continue" }).click();
  await expect(first.getByRole("heading", { name: "Save your recovery codes" })).toBeVisible();
  const recoveryCodes = await first.getByRole("list", { name: "Recovery codes" }).getByRole("listitem").allTextContents();
  expect(recoveryCodes).toHaveLength(10);
  for (const c of recoveryCodes) expect(c).toMatch(/^[a-z2-7]{4}-[a-z2-7]{8}-[a-z2-7]{8}$/);
  await first.getByRole("button", { name: "I have saved these codes" }).click();
  const enrolled = await readResult(first);
  expect(enrolled.id_token.claims).toMatchObject({ amr: ["pwd", "otp", "mfa"], acr: "urn:latchkey:loa:2" });

  // Next sign-in, another browser: the password, then a code. The setup code's step is used, so
  // the next step's code (accepted: one step of drift either side) is typed.
  const second = await passwordStep(browser);
  await expect(second.getByRole("heading", { name: "Confirm it's you" })).toBeVisible();
  await second.getByLabel("Code from your authenticator app").fill(code(secret, 1));
  await second.getByRole("button", { name: "Verify", exact: true }).click();
  const withCode = await readResult(second);
  expect(withCode.id_token.claims).toMatchObject({ amr: ["pwd", "otp", "mfa"], acr: "urn:latchkey:loa:2" });
  expect(withCode.id_token.claims.sub).toBe(enrolled.id_token.claims.sub);

  // A recovery code in place of the app: once.
  const third = await passwordStep(browser);
  await third.getByText("Use a recovery code").click();
  await third.getByLabel("Recovery code").fill(recoveryCodes[0]);
  await third.getByRole("button", { name: "Use recovery code" }).click();
  const withRecovery = await readResult(third);
  expect(withRecovery.id_token.claims).toMatchObject({ amr: ["pwd", "otp", "mfa"], acr: "urn:latchkey:loa:2" });

  const fourth = await passwordStep(browser);
  await fourth.getByText("Use a recovery code").click();
  await fourth.getByLabel("Recovery code").fill(recoveryCodes[0]);
  await fourth.getByRole("button", { name: "Use recovery code" }).click();
  await expect(fourth.getByRole("alert").filter({ hasText: "That recovery code is incorrect or was already used" })).toBeVisible();
  await expect(fourth).toHaveURL((url) => url.href.startsWith(`${ISSUER}/`));
});
