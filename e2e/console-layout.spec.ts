/**
 * The console's page layout (docs/console.md): the application page's sections reachable from its
 * section list, destructive actions opened by a quiet button (solid red only for the last step of
 * a confirmation) inside each page's danger zone, one look for every confirmation, the overview's
 * activity charts on one baseline, and the hostname form's button beside its input.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { APP, ISSUER, LATCHKEY_PORT } from "./env";
import { signInToConsole } from "./console-operator";

const WS = `http://localhost:${LATCHKEY_PORT}/console/w/e2e`;
const ADA = { email: "ada@example.com", password: "correct horse battery staple" };

test.use({ viewport: { width: 1280, height: 900 } });

/** Serious and critical WCAG 2.1 A/AA violations, as e2e/accessibility.spec.ts counts them. */
async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return results.violations.filter((v) => v.impact === "serious" || v.impact === "critical").flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(" ")}`));
}

/** The visible buttons (and disclosure openers) outside any confirmation, with their computed background. */
async function openerBackgrounds(page: Page): Promise<Array<{ text: string; background: string }>> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>("main button, main summary")]
      .filter((el) => el.offsetParent !== null && !el.closest("[data-confirmation]"))
      .map((el) => ({ text: el.textContent?.trim() ?? "", background: getComputedStyle(el).backgroundColor })),
  );
}

test("the application page: one tab at a time from its list, a quiet danger zone, the same confirmation twice", async ({ page }, testInfo) => {
  test.setTimeout(180_000);
  await signInToConsole(page);
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.goto(`${WS}/applications/e2e-web`);
  const nav = page.getByRole("navigation", { name: "Application sections" });
  // Each tab, the card it shows first, and a card of another tab it does not show.
  const tabs: Array<[string, string | null, string]> = [
    ["Connect", null, "#connect"],
    ["Settings", "settings", "#settings"],
    ["Secrets", "secrets", "#secrets"],
    ["Sign-in", "sign-in", "#authentication"],
    ["API access", "api-access", "#api-grants"],
    ["Portal", "portal", "#handoff"],
    ["Danger zone", "danger-zone", "#danger-zone"],
  ];
  await expect(nav.getByRole("link")).toHaveText(tabs.map(([name]) => name));
  for (const [name, tab, card] of tabs) {
    await nav.getByRole("link", { name }).click();
    await expect(page).toHaveURL((url) => url.searchParams.get("tab") === tab);
    await expect(nav.getByRole("link", { name })).toHaveAttribute("aria-current", "page");
    await expect(nav.locator('[aria-current="page"]')).toHaveCount(1);
    await expect(page.locator(card)).toBeVisible();
    for (const [, , other] of tabs) if (other !== card) await expect(page.locator(other), `${name} shows ${other}`).toHaveCount(0);
    // No tab is the page it replaced (3,900 px at this width, every card at once).
    expect(await page.evaluate(() => document.documentElement.scrollHeight), `${name}'s height`).toBeLessThan(2000);
    expect(await seriousViolations(page), name).toEqual([]);
    const shot = testInfo.outputPath(`application-${tab ?? "connect"}-1280.png`);
    await page.screenshot({ path: shot, fullPage: true });
    await testInfo.attach(`application-${tab ?? "connect"}-1280`, { path: shot, contentType: "image/png" });
  }
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${WS}/applications/e2e-web?tab=secrets`);
  const phone = testInfo.outputPath("application-secrets-390.png");
  await page.screenshot({ path: phone, fullPage: true });
  await testInfo.attach("application-secrets-390", { path: phone, contentType: "image/png" });
  await page.setViewportSize({ width: 1280, height: 720 });

  await page.goto(`${WS}/applications/e2e-web?tab=danger-zone`);
  const danger = page.getByRole("region", { name: "Danger zone" });
  await expect(danger).toBeVisible();
  await expect(danger.getByRole("button", { name: "Disable application" })).toBeVisible();
  await expect(danger.getByText("Delete application…")).toBeVisible();

  // The typed confirmation: its last button is the solid one.
  await danger.getByText("Delete application…").click();
  const typed = page.getByRole("form", { name: "Delete E2E web for good?" });
  const solid = await typed.getByRole("button", { name: "Delete application" }).evaluate((el) => getComputedStyle(el).backgroundColor);
  const quiet = await danger.getByText("Delete application…").evaluate((el) => getComputedStyle(el).backgroundColor);
  expect(quiet).not.toBe(solid);
  expect(["rgba(0, 0, 0, 0)", "rgb(255, 255, 255)"]).not.toContain(solid);
  expect(await seriousViolations(page)).toEqual([]);
  const panelStyle = (locator: ReturnType<Page["locator"]>) => locator.evaluate((el) => getComputedStyle(el).borderTopColor);
  const typedPanel = await panelStyle(typed.locator("[data-confirmation]"));

  // No opener on the page is solid red.
  for (const opener of await openerBackgrounds(page)) expect(opener, opener.text).not.toMatchObject({ background: solid });

  // The dialog confirmation looks like the typed one: the same panel, its confirm button as solid.
  await page.goto(`${WS}/applications/e2e-web?tab=secrets`);
  for (const opener of await openerBackgrounds(page)) expect(opener, opener.text).not.toMatchObject({ background: solid });
  await page.getByRole("table", { name: "Client secrets" }).getByRole("button", { name: "Revoke" }).first().click();
  const dialog = page.getByRole("dialog", { name: "Revoke this secret?" });
  await expect(dialog.locator('[data-confirmation="danger"]')).toBeVisible();
  expect(await dialog.getByRole("button", { name: "Revoke" }).evaluate((el) => getComputedStyle(el).backgroundColor)).toBe(solid);
  expect(await panelStyle(dialog.locator("[data-confirmation]"))).toBe(typedPanel);
  expect(await seriousViolations(page)).toEqual([]);
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();

  // The other pages with destructive actions: a danger zone where there is one, and no solid opener.
  const pages: Array<[string, (p: Page) => Promise<void>, boolean]> = [
    ["settings", (p) => p.goto(`${WS}/settings`).then(() => undefined), true],
    ["an API", (p) => p.goto(`${WS}/apis`).then(() => p.getByRole("main").getByRole("table").getByRole("link").first().click()), true],
    ["a role", (p) => p.goto(`${WS}/roles`).then(() => p.getByRole("main").getByRole("table").getByRole("link").first().click()), true],
    ["a user", (p) => p.goto(`${WS}/users`).then(() => p.getByRole("link", { name: ADA.email }).first().click()), true],
    ["operators", (p) => p.goto(`${WS}/operators`).then(() => undefined), false],
  ];
  for (const [what, open, hasZone] of pages) {
    await open(page);
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    if (hasZone) await expect(page.getByRole("region", { name: "Danger zone" }), what).toBeVisible();
    for (const opener of await openerBackgrounds(page)) expect(opener, `${what}: ${opener.text}`).not.toMatchObject({ background: solid });
    expect(await seriousViolations(page), what).toEqual([]);
  }
});

test("the overview's activity charts share one baseline at 1280 px", async ({ browser, page }) => {
  // A sign-in, so the overview draws its charts.
  const user = await browser.newPage();
  await user.goto(`${APP}/start`);
  await expect(user).toHaveURL((url) => url.href.startsWith(`${ISSUER}/sign-in`));
  await user.getByLabel("Email", { exact: true }).fill(ADA.email);
  await user.getByLabel("Password", { exact: true }).fill(ADA.password);
  await user.getByRole("button", { name: "Sign in", exact: true }).click();
  await user.waitForURL(`${APP}/profile`);
  await user.close();

  await signInToConsole(page);
  await page.goto(WS);
  const plots = page.locator('[data-testid^="chart-"] svg[role="img"]');
  await expect(plots).toHaveCount(4);
  const boxes = await Promise.all((await plots.all()).map(async (plot) => (await plot.boundingBox())!));
  // Four in a row, "Refresh-token reuse alerts" on two lines: the plots' bottoms still level.
  for (const box of boxes) expect(Math.abs(box.y + box.height - (boxes[0].y + boxes[0].height))).toBeLessThanOrEqual(1);
});

test("the hostname form: the button beside its input at 1280 px, below it on a phone", async ({ page }) => {
  await signInToConsole(page);
  await page.goto(`${WS}/hostnames`);
  const form = page.getByRole("form", { name: "Add hostname" });
  const input = form.getByLabel("Add a hostname");
  const button = form.getByRole("button", { name: "Add hostname" });
  const level = async () => {
    const [i, b] = [(await input.boundingBox())!, (await button.boundingBox())!];
    return { sameRow: Math.abs(i.y - b.y) <= 1 && b.x > i.x + i.width, below: b.y >= i.y + i.height };
  };
  expect(await level()).toMatchObject({ sameRow: true });
  // With the form's error above, still beside.
  await input.fill("https://not a hostname/");
  await button.click();
  await expect(form.getByRole("alert")).toBeVisible();
  expect(await level()).toMatchObject({ sameRow: true });
  expect(await seriousViolations(page)).toEqual([]);

  await page.setViewportSize({ width: 390, height: 844 });
  expect(await level()).toMatchObject({ sameRow: false, below: true });
  // Nothing runs off the side.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
});
