/**
 * A new workspace's first hour in the console (lib/getting-started): the overview's checklist,
 * ticked from what the workspace holds, and trying an application's sign-in from the console: the
 * application's hosted page, then the console's page with the ID token's claims, which another
 * browser cannot read. axe checks the overview with the checklist and the outcome page.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page, type TestInfo } from "@playwright/test";
import { CONSOLE_BASE as BASE, signInToConsole } from "./console-operator";

const RUN = Date.now().toString(36);
const WS = `start-${RUN}`;
const APP = { clientId: "first-app", name: "First app", redirectUri: "http://127.0.0.1:3999/callback" };
const USER = { email: `tester-${RUN}@start.example`, name: "Test User", password: "tester long passphrase" };

async function expectAccessible(page: Page, what: string): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect.soft(serious, what).toEqual([]);
}

/** Screenshots of a page at desktop and phone widths, light and dark, attached to the test (test-results/…). */
async function shots(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  for (const [width, height] of [[1280, 800], [390, 844]]) {
    for (const colorScheme of ["light", "dark"] as const) {
      await page.setViewportSize({ width, height });
      await page.emulateMedia({ colorScheme });
      const path = testInfo.outputPath(`${name}-${width}-${colorScheme}.png`);
      await page.screenshot({ path, fullPage: true });
      await testInfo.attach(`${name}-${width}-${colorScheme}`, { path, contentType: "image/png" });
    }
  }
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.emulateMedia({ colorScheme: "light" });
}

const step = (page: Page, key: string) => page.getByRole("region", { name: "Get started" }).locator(`[data-step="${key}"]`);

test("a new workspace's checklist, and trying an application's sign-in from the console", async ({ page, browser }, testInfo) => {
  test.setTimeout(180_000);
  await signInToConsole(page);

  await test.step("an empty workspace says what to do first, instead of empty charts", async () => {
    const form = page.getByRole("form", { name: "Create a workspace" });
    await form.getByLabel("Id").fill(WS);
    await form.getByLabel("Name").fill("Getting started");
    await form.getByRole("button", { name: "Create workspace" }).click();
    await expect(page).toHaveURL(`${BASE}/console/w/${WS}`);
    await expect(page.getByRole("region", { name: "Get started" })).toContainText("0 of 4 steps done");
    for (const key of ["application", "connected", "signed_in", "audited"]) await expect(step(page, key)).toHaveAttribute("data-done", "false");
    await expect(page.getByTestId("activity-empty")).toBeVisible();
    await expect(page.getByTestId("chart-factors")).toHaveCount(0);
    await expectAccessible(page, "overview of an empty workspace");
    await shots(page, testInfo, "overview-empty");
  });

  await test.step("an application and a user tick the first step", async () => {
    await step(page, "application").getByRole("link", { name: "Create an application" }).click();
    const form = page.getByRole("form", { name: "New application" });
    await form.getByLabel("Kind").selectOption("spa");
    await form.getByLabel("Name").fill(APP.name);
    await form.getByLabel("Client id").fill(APP.clientId);
    await form.getByLabel(/^Redirect URIs/).fill(APP.redirectUri);
    await form.getByRole("button", { name: "Create application" }).click();
    await expect(page).toHaveURL(`${BASE}/console/w/${WS}/applications/${APP.clientId}`);
    await page.goto(`${BASE}/console/w/${WS}/users/new`);
    const user = page.getByRole("form", { name: "New user" });
    await user.getByLabel("Email", { exact: true }).fill(USER.email);
    await user.getByLabel("Name").fill(USER.name);
    await user.getByLabel("Password").fill(USER.password);
    await user.getByLabel("The email address is verified").check();
    await user.getByRole("button", { name: "Create user" }).click();
    await expect(page).toHaveURL(new RegExp(`/console/w/${WS}/users/[0-9a-f-]{36}$`));
    await page.goto(`${BASE}/console/w/${WS}`);
    await expect(step(page, "application")).toHaveAttribute("data-done", "true");
    await expect(step(page, "signed_in")).toHaveAttribute("data-done", "false");
  });

  let outcomeUrl = "";
  await test.step("trying the sign-in: the application's hosted page, then the ID token's claims in the console", async () => {
    await step(page, "signed_in").getByRole("button", { name: "Try sign-in" }).click();
    await expect(page).toHaveURL((url) => url.pathname === `/t/${WS}/sign-in`);
    await page.getByLabel("Email", { exact: true }).fill(USER.email);
    await page.getByLabel("Password", { exact: true }).fill(USER.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect(page).toHaveURL((url) => url.pathname === `/console/w/${WS}/applications/${APP.clientId}/try`);
    outcomeUrl = page.url();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Sign-in tried");
    await expect(page.getByText(`Signed in as ${USER.email}`)).toBeVisible();
    const claims = page.getByRole("region", { name: "The ID token's claims" });
    for (const [name, value] of [
      ["iss", `"${BASE}/t/${WS}"`],
      ["aud", `"${APP.clientId}"`],
      ["email", `"${USER.email}"`],
      ["amr", '["pwd"]'],
    ]) {
      await expect(claims.locator("dt", { hasText: new RegExp(`^${name}$`) }).locator("+ dd")).toHaveText(value);
    }
    await expectAccessible(page, "a tried sign-in's outcome");
    await shots(page, testInfo, "tried-sign-in");
  });

  await test.step("another browser, even the same operator's, cannot read the outcome", async () => {
    const other = await browser.newContext();
    const otherPage = await other.newPage();
    await signInToConsole(otherPage);
    await otherPage.goto(outcomeUrl);
    await expect(otherPage.getByText("No outcome to show")).toBeVisible();
    await expect(otherPage.getByText(USER.email)).toHaveCount(0);
    await other.close();
  });

  await test.step("the checklist ticks the sign-in and its audit event, and the audit log shows it", async () => {
    await page.goto(`${BASE}/console/w/${WS}`);
    await expect(step(page, "signed_in")).toHaveAttribute("data-done", "true");
    await expect(step(page, "audited")).toHaveAttribute("data-done", "true");
    // No application has used its settings yet: a tried sign-in issues nothing.
    await expect(step(page, "connected")).toHaveAttribute("data-done", "false");
    await expect(page.getByRole("region", { name: "Get started" })).toContainText("3 of 4 steps done");
    await expectAccessible(page, "overview with the checklist");
    await step(page, "audited").getByRole("link", { name: "Open the audit log" }).click();
    await expect(page.getByText(`${USER.email} signed in, trying the sign-in from the console`)).toBeVisible();
  });
});
