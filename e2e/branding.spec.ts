/**
 * Per-workspace branding, end to end: an operator sets the display name, primary colour (a
 * colour buttons cannot carry text on is refused beside the field, with its ratio), theme and
 * logo (SVG refused) in the console; the hosted sign-in page shows them, loads the logo from the
 * workspace's own issuer with no CSP violation, follows the browser's dark preference, and obeys a
 * forced light or dark theme; a light primary colour passes axe in both schemes. The spec puts
 * the workspace's branding back as it found it.
 */
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { APP, ISSUER, LATCHKEY_PORT } from "./env";
import { signInToConsole } from "./console-operator";

const BASE = `http://localhost:${LATCHKEY_PORT}`;
/** A 16 × 16 teal square. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFklEQVR4nGPgL8sjCTGMahjVMHw1AADRzfMB5Ye3vAAAAABJRU5ErkJggg==", "base64");
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="10" height="10"/></svg>');
const BRANDING = `${BASE}/console/w/e2e/branding`;

async function saveLook(page: Page, look: { name: string; color: string; theme: "auto" | "light" | "dark" }): Promise<void> {
  await page.goto(BRANDING);
  const form = page.getByRole("form", { name: "Name, colour and theme" });
  await form.getByLabel("Display name").fill(look.name);
  await form.getByLabel("Primary colour", { exact: true }).fill(look.color);
  await form.getByLabel("Theme").selectOption(look.theme);
  await form.getByRole("button", { name: "Save branding" }).click();
  await expect(form.getByText("Saved.")).toBeVisible();
}

/** The sign-in page in a fresh browser with the given colour scheme, failing on any CSP violation. */
async function signInPage(browser: Browser, colorScheme: "light" | "dark"): Promise<{ page: Page; violations: string[] }> {
  const context = await browser.newContext({ colorScheme });
  const page = await context.newPage();
  const violations: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  await page.goto(`${APP}/start`);
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/sign-in`));
  return { page, violations };
}

/** Serious and critical WCAG 2.1 A/AA violations on the page as it is now. */
async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return results.violations.filter((v) => v.impact === "serious" || v.impact === "critical").flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(" ")}`));
}

const css = (page: Page, selector: string, property: string) => page.locator(selector).first().evaluate((el, p) => getComputedStyle(el).getPropertyValue(p), property);
const CARD = "main .rounded-xl";
const BUTTON = 'main button[type="submit"].bg-indigo-600';

test("branding set in the console shows on the hosted sign-in, light, dark and forced", async ({ page, browser }) => {
  test.setTimeout(180_000);
  await signInToConsole(page);

  // The console page's live preview sets its colours from script: no CSP violation either.
  const consoleViolations: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) consoleViolations.push(m.text());
  });

  await test.step("a primary colour buttons cannot carry text on is refused beside the field, with its ratio", async () => {
    await page.goto(BRANDING);
    await expect(page.getByRole("group", { name: "Preview" })).toBeVisible();
    const form = page.getByRole("form", { name: "Name, colour and theme" });
    await form.getByLabel("Primary colour", { exact: true }).fill("#777777");
    await form.getByRole("button", { name: "Save branding" }).click();
    await expect(page.getByTestId("primary-color-error")).toContainText("4.47:1");
    await expect(form.getByLabel("Primary colour", { exact: true })).toHaveValue("#777777");
  });

  await test.step("name, colour and theme saved; an SVG logo refused, a PNG taken", async () => {
    await saveLook(page, { name: "Acme Identity", color: "#0f766e", theme: "auto" });
    const upload = page.getByRole("form", { name: "Upload logo" });
    await upload.getByLabel("Logo image").setInputFiles({ name: "logo.png", mimeType: "image/png", buffer: SVG });
    await upload.getByRole("button", { name: "Upload logo" }).click();
    await expect(page.getByTestId("logo-error")).toContainText("PNG, JPEG, WebP or GIF");
    await upload.getByLabel("Logo image").setInputFiles({ name: "logo.png", mimeType: "image/png", buffer: PNG });
    await upload.getByRole("button", { name: "Upload logo" }).click();
    await expect(page.getByTestId("current-logo")).toBeVisible();
  });

  await test.step("the sign-in page shows the name, the logo from the issuer and the colour; light by default", async () => {
    const { page: hosted, violations } = await signInPage(browser, "light");
    await expect(hosted.getByTestId("workspace-display-name")).toHaveText("Acme Identity");
    const logo = hosted.getByTestId("workspace-logo");
    await expect(logo).toHaveAttribute("src", /^\/t\/e2e\/branding\/logo\/[0-9a-f]{64}$/);
    await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(16);
    expect(await css(hosted, BUTTON, "background-color")).toBe("rgb(15, 118, 110)");
    expect(await css(hosted, BUTTON, "color")).toBe("rgb(255, 255, 255)");
    expect(await css(hosted, CARD, "background-color")).toBe("rgb(255, 255, 255)");
    expect(violations).toEqual([]);
    await hosted.context().close();
  });

  await test.step("dark preference: dark surfaces, light text, the same button", async () => {
    const { page: hosted, violations } = await signInPage(browser, "dark");
    expect(await css(hosted, CARD, "background-color")).toBe("rgb(15, 23, 42)");
    expect(await css(hosted, "body", "background-color")).toBe("rgb(2, 6, 23)");
    expect(await css(hosted, "main h1", "color")).toBe("rgb(241, 245, 249)");
    expect(await css(hosted, BUTTON, "background-color")).toBe("rgb(15, 118, 110)");
    // Switching the preference on the open page switches the theme.
    await hosted.emulateMedia({ colorScheme: "light" });
    expect(await css(hosted, CARD, "background-color")).toBe("rgb(255, 255, 255)");
    expect(violations).toEqual([]);
    await hosted.context().close();
  });

  await test.step("a forced theme ignores the preference", async () => {
    await saveLook(page, { name: "Acme Identity", color: "#0f766e", theme: "light" });
    let { page: hosted } = await signInPage(browser, "dark");
    expect(await css(hosted, CARD, "background-color")).toBe("rgb(255, 255, 255)");
    await hosted.context().close();

    await saveLook(page, { name: "Acme Identity", color: "#0f766e", theme: "dark" });
    ({ page: hosted } = await signInPage(browser, "light"));
    expect(await css(hosted, CARD, "background-color")).toBe("rgb(15, 23, 42)");
    await hosted.context().close();
  });

  await test.step("a light primary colour stays readable in both themes (axe: no serious violation)", async () => {
    await saveLook(page, { name: "Acme Identity", color: "#facc15", theme: "auto" });
    for (const scheme of ["light", "dark"] as const) {
      const { page: hosted } = await signInPage(browser, scheme);
      // Near-black text on the yellow button.
      expect(await css(hosted, BUTTON, "color")).toBe("rgb(17, 24, 39)");
      expect(await seriousViolations(hosted), scheme).toEqual([]);
      await hosted.context().close();
    }
    expect(consoleViolations).toEqual([]);
  });

  await test.step("put the workspace's branding back", async () => {
    await saveLook(page, { name: "", color: "#4f46e5", theme: "auto" });
    await page.getByRole("button", { name: "Remove logo" }).click();
    await expect(page.getByTestId("current-logo")).toHaveCount(0);
  });
});
