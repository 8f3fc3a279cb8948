/**
 * Accessibility of the hosted pages and the main console pages: axe-core (WCAG 2.1 A and AA rules)
 * finds no serious or critical violation, in the light and the dark colour scheme (hosted pages
 * follow `prefers-color-scheme`). A failure lists each violation with the elements it found.
 *
 * The console part signs in as the first operator; when this spec runs before the console spec on
 * a fresh server it does the first-run setup itself with the same operator.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { APP, ISSUER, LATCHKEY_PORT } from "./env";
import { signInToConsole } from "./console-operator";

const BASE = `http://localhost:${LATCHKEY_PORT}`;
const ADA = { email: "ada@example.com", password: "correct horse battery staple" };

/** Serious and critical WCAG 2.1 A/AA violations on the page as it is now, one line per element. */
async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(" ")} — ${n.failureSummary?.replace(/\s+/g, " ") ?? v.help}`));
}

async function expectAccessible(page: Page, what: string): Promise<void> {
  const found = await seriousViolations(page);
  // Soft: one run reports every page's violations.
  expect.soft(found, `${what} (${page.url()})`).toEqual([]);
}

async function toSignInPage(page: Page): Promise<void> {
  await page.goto(`${APP}/start`);
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/sign-in`));
}

for (const colorScheme of ["light", "dark"] as const) {
  test.describe(`hosted pages, ${colorScheme}`, () => {
    test.use({ colorScheme });

    test("sign-in, a wrong password, the email code, the error page and the portal", async ({ page }) => {
      test.setTimeout(120_000);
      await toSignInPage(page);
      await expectAccessible(page, "sign-in page");

      await page.getByLabel("Email", { exact: true }).fill(ADA.email);
      await page.getByLabel("Password", { exact: true }).fill("not the password");
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await expect(page.getByRole("alert").first()).toBeVisible();
      await expectAccessible(page, "sign-in page with an error");

      // "Forgot your password?": the reset's form, then its code step (an address with no account: nothing is sent).
      await page.getByRole("link", { name: "Forgot your password?" }).click();
      await expect(page.getByRole("heading", { name: "Reset your password" })).toBeVisible();
      await expectAccessible(page, "password reset page");
      await page.getByLabel("Email", { exact: true }).fill(`nobody-${colorScheme}@example.com`);
      await page.getByRole("button", { name: "Send a code" }).click();
      await expect(page.getByRole("heading", { name: "Check your email" })).toBeVisible();
      await expectAccessible(page, "password reset code page");

      // The self-contained error page (an unknown client).
      await page.goto(`${ISSUER}/oauth2/authorize?client_id=no-such-client&response_type=code&scope=openid`);
      await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
      await expectAccessible(page, "hosted error page");
      // With the lines for the developer: an unregistered redirect URI on this localhost server
      // lists the registered ones and links to the application's console page.
      await page.goto(`${ISSUER}/oauth2/authorize?client_id=e2e-web&redirect_uri=${encodeURIComponent(`${APP}/not-registered`)}`);
      await expect(page.getByRole("link", { name: "Change this application's redirect URIs in the console" })).toHaveAttribute("href", `${BASE}/console/w/e2e/applications/e2e-web?tab=settings`);
      await expectAccessible(page, "hosted error page with the developer's details");

      // The not-found page of an address that names nothing.
      await page.goto(`${BASE}/nope`);
      await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
      await expectAccessible(page, "not-found page");

      // Signed in, then the account-security portal.
      await toSignInPage(page);
      await page.getByLabel("Email", { exact: true }).fill(ADA.email);
      await page.getByLabel("Password", { exact: true }).fill(ADA.password);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.waitForURL(`${APP}/profile`);
      await page.goto(`${ISSUER}/account`);
      await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
      await expectAccessible(page, "account-security portal");
    });
  });
}

test("the main console pages", async ({ page }) => {
  test.setTimeout(180_000);
  await signInToConsole(page);
  await expectAccessible(page, "workspaces");

  const ws = `${BASE}/console/w/e2e`;
  const pages = ["", "/applications", "/applications/new", "/applications/e2e-web", "/authentication", "/passwords", "/bot-protection", "/alerts", "/apis", "/roles", "/users", "/organizations", "/social", "/keys", "/hostnames", "/audit", "/operators", "/branding", "/settings"];
  for (const path of pages) {
    await page.goto(ws + path);
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    await expectAccessible(page, `console ${path || "overview"}`);
  }

  // An organization's page with the new connection's form for SAML (its SP addresses shown before saving).
  await page.goto(`${ws}/organizations`);
  const organization = await page.getByRole("link", { name: "Acme Corp", exact: true }).getAttribute("href");
  await page.goto(`${BASE}${organization}?protocol=saml`);
  await expect(page.getByLabel(/^Identity provider metadata/)).toBeVisible();
  await expectAccessible(page, "console organization, new SAML connection");

  // A user's page: the first user in the list.
  await page.goto(`${ws}/users`);
  await page.getByRole("link", { name: ADA.email }).first().click();
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
  await expectAccessible(page, "console user");
});
