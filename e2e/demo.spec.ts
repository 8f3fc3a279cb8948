/**
 * The first run's path: from the landing page to a signed-in demo user and back, in Chromium, on
 * the production build. The e2e server starts with its own fixture workspaces (so `npm start`'s
 * first-start demo is not created there); this spec imports the demo workspace exactly as the
 * first start writes it (lib/workspaces/demo.ts, for this server's PUBLIC_URL and master key, so
 * that the demo application's clients carry the secrets the server derives) through the CLI.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { DEMO_USER, demoWorkspace } from "../lib/workspaces/demo";
import { LATCHKEY_PORT } from "./env";
import { demoHostedSignIn } from "./demo-sign-in";
import { importWorkspace, serverMasterKey, type ExportedWorkspace } from "./federation-admin";

const BASE = `http://localhost:${LATCHKEY_PORT}`;

/** Serious and critical WCAG 2.1 A/AA violations on the page as it is now. */
async function accessibilityViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return results.violations.filter((v) => v.impact === "serious" || v.impact === "critical").flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(" ")}`));
}

test.beforeAll(async () => {
  await importWorkspace(demoWorkspace(BASE, serverMasterKey()) as unknown as ExportedWorkspace);
});

test("landing page → demo application: sign in, see the claims, UserInfo and session check, refresh, sign out, revoke", async ({ page }) => {
  await page.goto(`${BASE}/`);
  await expect(page.getByText(`Sign in as ${DEMO_USER.email} with the password ${DEMO_USER.password}.`)).toBeVisible();
  expect(await accessibilityViolations(page)).toEqual([]);
  await page.getByRole("link", { name: "Sign in to the demo application" }).click();
  await expect(page).toHaveURL(`${BASE}/demo`);
  expect(await accessibilityViolations(page)).toEqual([]);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await demoHostedSignIn(page, BASE);

  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Signed in as Demo User");
  await expect(page.getByText(DEMO_USER.email, { exact: true })).toBeVisible();
  const check = page.locator("section", { has: page.getByRole("heading", { name: "Session check" }) });
  await expect(check).toContainText("HTTP 200, so still valid");
  await expect(check.locator("pre")).toContainText('"active": true');
  await expect(page.locator("section", { has: page.getByRole("heading", { name: "ID token claims" }) }).locator("pre")).toContainText('"aud": "demo-app"');
  await expect(page.locator("section", { has: page.getByRole("heading", { name: "UserInfo" }) }).locator("pre")).toContainText('"email": "demo@example.com"');
  // The tokens stay on the server: the page has no script, and its cookie is HttpOnly.
  expect(await page.locator("script").count()).toBe(0);
  expect(await accessibilityViolations(page)).toEqual([]);
  const cookie = (await page.context().cookies(`${BASE}/demo`)).find((c) => c.name === "latchkey_demo")!;
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/demo" });

  // Security settings: one click from the sign-in to the account-security portal, through the
  // backend handoff (the demo's server launches, the browser's hosted session opens the portal at
  // the launch URL), whose way back is the demo application, not the server's root.
  const launched = page.waitForRequest((request) => request.url().startsWith(`${BASE}/t/demo/auth/account/handoff?launch=`));
  await page.getByRole("button", { name: "Security settings" }).click();
  await launched;
  await expect(page).toHaveURL(`${BASE}/t/demo/account`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Security settings");
  await expect(page.getByRole("link", { name: "Back to Demo application" })).toHaveAttribute("href", `${BASE}/demo`);
  await page.getByRole("button", { name: "Done: back to Demo application" }).click();
  await expect(page).toHaveURL(`${BASE}/demo`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Signed in as Demo User");
  await expect(page.getByText(/started a backend handoff/)).toBeVisible();

  await page.getByRole("button", { name: "Refresh tokens" }).click();
  await expect(page.getByText(/Refreshed: new access token #[0-9a-f]{8} until .* refresh token rotated #[0-9a-f]{8} → #[0-9a-f]{8}/)).toBeVisible();
  await expect(page.getByText("refreshed 1 time.")).toBeVisible();
  await expect(check).toContainText("still valid");

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(`${BASE}/demo`);
  await expect(page.getByText(/Latchkey ended the hosted session/)).toBeVisible();

  // The hosted session ended: signing in asks for the password again, without the passkey offer
  // this browser declined. Then revoke.
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await demoHostedSignIn(page, BASE, { passkeyOffer: false });
  await page.getByRole("button", { name: "Revoke" }).click();
  await expect(page.getByText(/Revoked the refresh token/)).toBeVisible();
  await expect(check).toContainText("no longer valid");
  await page.getByRole("button", { name: "Refresh tokens" }).click();
  await expect(page.getByText(/Refresh refused \(invalid_grant/)).toBeVisible();
  await expect(page.getByRole("button", { name: "Sign in", exact: true })).toBeVisible();
});

test("the demo application at phone width, and its error pages", async ({ page }) => {
  await page.setViewportSize({ width: 375, height: 700 });
  await page.goto(`${BASE}/demo`);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
  await page.goto(`${BASE}/demo/callback?code=x&state=not-this-browsers`);
  await expect(page.getByRole("heading", { name: "Sign-in not finished" })).toBeVisible();
  await page.getByRole("link", { name: "Back to the demo application" }).click();
  await expect(page.getByRole("button", { name: "Sign in with MFA required" })).toBeVisible();
});
