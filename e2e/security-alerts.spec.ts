/**
 * Security alerts by email, end to end over SMTP (SMTP_URL, playwright.config.ts) to a real SMTP
 * server started here (e2e/smtp-inbox.ts): the e2e workspace turns every alert on (its file's
 * `security_alerts`), and the console shows and edits them. For one account: a passkey added and
 * removed and recovery codes created in the portal, a sign-in from a new browser (a browser
 * context of its own), a refresh token reused by the example application, and a password an
 * administrator set in the console each arrive as a message that says what happened, when, from
 * where, and what to do if it was not them.
 */
import { expect, test, type Browser, type Page } from "@playwright/test";
import { startCustomerApp, type CustomerAppProcess } from "./customer-app-process";
import { CONSOLE_BASE, signInToConsole } from "./console-operator";
import { ISSUER, SMTP_PORT } from "./env";
import { SmtpInbox, type ReceivedMail } from "./smtp-inbox";

const USER = { email: "alerts@example.com", password: "my alerts come by email" };
const CLIENT_ID = "e2e-account";
const DIRECT_LINK = `${ISSUER}/auth/account?client_id=${CLIENT_ID}`;
// The example application of e2e-account, as e2e/portal-manage.spec.ts starts it (its redirect URI names this port).
const APP_PORT = 3117;
const APP = `http://localhost:${APP_PORT}`;
const WS = `${CONSOLE_BASE}/console/w/e2e`;
// The dispatcher runs every 5 s.
const DELIVERED_WITHIN_MS = 20_000;

const inbox = new SmtpInbox();
let app: CustomerAppProcess | undefined;

test.beforeAll(async () => {
  await inbox.listen(SMTP_PORT);
  app = await startCustomerApp({ port: APP_PORT, clientId: CLIENT_ID, clientSecret: "e2e-account-secret-0123456789abcdef0123456789" });
});

test.afterAll(async () => {
  await app?.stop();
  await inbox.close();
});

/** The next alert to the user whose subject is `subject`, received after `since` messages. */
function alert(subject: string, since: number): Promise<ReceivedMail> {
  return inbox.waitFor(USER.email, { since, timeoutMs: DELIVERED_WITHIN_MS, match: (m) => m.subject === subject });
}

/** What every alert says besides what happened: when, from where, and the portal's link. */
function expectTheRest(mail: ReceivedMail): void {
  expect(mail.text).toMatch(/When: .+ UTC/);
  expect(mail.text).toMatch(/From: /);
  expect(mail.text).toContain(DIRECT_LINK);
  expect(mail.html).toContain(`<a href="${DIRECT_LINK.replace(/&/g, "&amp;")}">`);
}

async function signInAtPortal(page: Page): Promise<void> {
  await page.goto(DIRECT_LINK);
  await page.getByLabel("Email", { exact: true }).fill(USER.email);
  await page.getByLabel("Password", { exact: true }).fill(USER.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page).toHaveURL(`${ISSUER}/account`);
}

async function inNewBrowser<T>(browser: Browser, run: (page: Page) => Promise<T>, userAgent?: string): Promise<T> {
  const context = await browser.newContext(userAgent ? { userAgent } : {});
  try {
    return await run(await context.newPage());
  } finally {
    await context.close();
  }
}

test("the console shows and edits which alerts the workspace's users get", async ({ page }) => {
  await signInToConsole(page);
  await page.goto(`${WS}/alerts`);
  await expect(page.getByRole("heading", { name: "Security alerts", level: 1 })).toBeVisible();
  const reuse = page.getByLabel("A sign-in ended for a reused refresh token");
  await expect(reuse).toBeChecked();
  await reuse.uncheck();
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("Saved. It applies to the next change.")).toBeVisible();
  await page.reload();
  await expect(page.getByLabel("A sign-in ended for a reused refresh token")).not.toBeChecked();
  await expect(page.getByLabel("A sign-in from a new browser")).toBeChecked();
  // Back on, as the fixture has it, for the next test.
  await page.getByLabel("A sign-in ended for a reused refresh token").check();
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByText("Saved. It applies to the next change.")).toBeVisible();
});

test("each alert arrives by email: factors, recovery codes, a new browser, a reused refresh token, a new password", async ({ page, browser }) => {
  test.setTimeout(180_000);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });

  await test.step("the account's first sign-in teaches its browser, without an alert", async () => {
    await signInAtPortal(page);
  });

  await test.step("a passkey added in the portal", async () => {
    const since = inbox.messages.length;
    await page.getByRole("button", { name: "Add a passkey" }).click();
    await expect(page.getByText("Passkey added.")).toBeVisible();
    const mail = await alert("A sign-in method was added to your E2E account", since);
    expect(mail.text).toContain("A passkey was added to your E2E account.");
    expectTheRest(mail);
  });

  await test.step("recovery codes created in the portal", async () => {
    await page.getByRole("button", { name: "Use a passkey or security key" }).click();
    await expect(page.getByText("Thanks, you are confirmed for 10 minutes.")).toBeVisible();
    const since = inbox.messages.length;
    await page.getByRole("button", { name: "Create recovery codes" }).click();
    await expect(page.getByText("They will not be shown again.")).toBeVisible();
    await page.getByRole("button", { name: "I have saved them" }).click();
    const mail = await alert("New recovery codes for your E2E account", since);
    expect(mail.text).toContain("The codes you had before no longer work.");
    expectTheRest(mail);
  });

  await test.step("the passkey removed in the portal", async () => {
    const since = inbox.messages.length;
    await page.getByRole("button", { name: "Remove" }).click();
    await expect(page.getByText("Removed.")).toBeVisible();
    const mail = await alert("A sign-in method was removed from your E2E account", since);
    expect(mail.text).toContain("A passkey was removed from your E2E account.");
  });

  await test.step("a sign-in from another browser", async () => {
    const since = inbox.messages.length;
    await inNewBrowser(browser, signInAtPortal, "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.2; rv:121.0) Gecko/20100101 Firefox/121.0");
    const mail = await alert("New sign-in to your E2E account", since);
    expect(mail.text).toContain("Browser: Firefox 121 on macOS");
    expectTheRest(mail);
  });

  await test.step("a refresh token presented twice by the example application", async () => {
    const since = inbox.messages.length;
    // The browser's hosted session signs in to the application: no new browser, no alert.
    await page.goto(`${APP}/start`);
    await expect(page).toHaveURL(`${APP}/profile`);
    let statuses: number[] = [];
    for (let attempt = 0; attempt < 3 && !statuses.includes(401); attempt++) {
      statuses = await page.evaluate(async () => {
        const post = () => fetch("/lifecycle/refresh", { method: "POST" }).then((r) => r.status);
        return Promise.all([post(), post()]);
      });
    }
    expect(statuses.sort()).toEqual([200, 401]);
    const mail = await alert("A sign-in to your E2E account was ended", since);
    expect(mail.text).toContain("Your sign-in to E2E account app was ended");
    expectTheRest(mail);
  });

  await test.step("a password an administrator set in the console", async () => {
    await inNewBrowser(browser, async (operator) => {
      await signInToConsole(operator);
      await operator.goto(`${WS}/users?q=${encodeURIComponent(USER.email)}`);
      // Exactly this address: the search also finds handoff-alerts@example.com.
      await operator.getByRole("link", { name: USER.email, exact: true }).click();
      await expect(operator).toHaveURL(/\/console\/w\/e2e\/users\/[^/]+$/);
      const since = inbox.messages.length;
      await operator.getByLabel("New password").fill("a new password the administrator chose");
      await operator.getByRole("button", { name: "Set password" }).click();
      await expect(operator.getByText("Password set.")).toBeVisible();
      const mail = await alert("Your E2E password was changed", since);
      expect(mail.text).toContain("An administrator of E2E set a new password for your account.");
      expect(mail.text).toContain("contact the administrator");
      expectTheRest(mail);
    });
  });

  // Each change alerted once; the first sign-in and the known browser did not.
  const subjects = inbox.messages.filter((m) => m.to.includes(USER.email)).map((m) => m.subject);
  expect(subjects.sort()).toEqual(
    [
      "A sign-in method was added to your E2E account",
      "New recovery codes for your E2E account",
      "A sign-in method was removed from your E2E account",
      "New sign-in to your E2E account",
      "A sign-in to your E2E account was ended",
      "Your E2E password was changed",
    ].sort(),
  );
});
