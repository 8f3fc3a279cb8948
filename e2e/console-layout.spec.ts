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

test("the application page: its sections from the list, a quiet danger zone, the same confirmation twice", async ({ page }) => {
  await signInToConsole(page);
  await page.goto(`${WS}/applications/e2e-web`);
  const nav = page.getByRole("navigation", { name: "Application sections" });
  const names = ["Connect", "Settings", "Secrets", "Sign-in policy", "API access", "Portal", "Danger zone"];
  await expect(nav.getByRole("link")).toHaveText(names);
  for (const name of names) {
    const link = nav.getByRole("link", { name });
    const id = (await link.getAttribute("href"))!.slice(1);
    await link.click();
    await expect(page).toHaveURL(new RegExp(`#${id}$`));
    const section = page.locator(`[id="${id}"]`);
    await expect(section).toBeInViewport();
    // Clear of the sticky list.
    const navBox = (await nav.boundingBox())!;
    expect((await section.boundingBox())!.y).toBeGreaterThanOrEqual(navBox.y + navBox.height - 1);
  }
  // The overview's "rotate" link lands on the secrets.
  await expect(page.locator("#secrets")).toHaveCount(1);

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

  // No opener on the page is solid red.
  for (const opener of await openerBackgrounds(page)) expect(opener, opener.text).not.toMatchObject({ background: solid });

  // The dialog confirmation looks like the typed one: the same panel, its confirm button as solid.
  await page.getByRole("table", { name: "Client secrets" }).getByRole("button", { name: "Revoke" }).first().click();
  const dialog = page.getByRole("dialog", { name: "Revoke this secret?" });
  await expect(dialog.locator('[data-confirmation="danger"]')).toBeVisible();
  expect(await dialog.getByRole("button", { name: "Revoke" }).evaluate((el) => getComputedStyle(el).backgroundColor)).toBe(solid);
  const panelStyle = (locator: ReturnType<Page["locator"]>) => locator.evaluate((el) => getComputedStyle(el).borderTopColor);
  expect(await panelStyle(dialog.locator("[data-confirmation]"))).toBe(await panelStyle(typed.locator("[data-confirmation]")));
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
