/**
 * The console's audit log, activity charts and users, end to end: a user created in the console
 * signs in from an iPhone (one wrong password first; the code is not exchanged, so no grant); their page shows the device and their
 * factors; the operator disables them through the confirmation; the audit log finds the change by
 * actor and type, reads it as one line with details folded, exports JSON lines, and stays compact
 * at phone width; the overview's charts render.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { APP_PORT, LATCHKEY_PORT } from "./env";
import { FIRST_OPERATOR as OPERATOR, signInToConsole } from "./console-operator";

const BASE = process.env.LATCHKEY_URL ?? `http://localhost:${LATCHKEY_PORT}`;
const RUN = Date.now().toString(36);
const USER = { email: `device-${RUN}@example.com`, password: "device user long password" };
const WS = `${BASE}/console/w/e2e`;
const IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1";

/** The user signs in to the e2e SPA client from an iPhone browser: one wrong password, then the right one. */
async function signInFromIphone(browser: Browser): Promise<void> {
  const context = await browser.newContext({ userAgent: IPHONE });
  const page = await context.newPage();
  const verifier = randomBytes(32).toString("base64url");
  const query = new URLSearchParams({
    response_type: "code",
    client_id: "e2e-spa",
    redirect_uri: `http://localhost:${APP_PORT}/spa-callback`,
    scope: "openid email",
    state: randomBytes(24).toString("base64url"),
    nonce: randomBytes(24).toString("base64url"),
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  });
  await page.goto(`${BASE}/t/e2e/oauth2/authorize?${query}`);
  await expect(page).toHaveURL((url) => url.pathname === "/t/e2e/sign-in");
  await page.getByLabel("Email", { exact: true }).fill(USER.email);
  await page.getByLabel("Password", { exact: true }).fill("not the right password");
  const refused = page.waitForResponse((r) => r.url().includes("/sign-in/password"));
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await refused;
  await page.waitForLoadState();
  await page.getByLabel("Password", { exact: true }).fill(USER.password);
  const landed = page.waitForRequest((r) => r.url().includes("/spa-callback"));
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await landed;
  await context.close();
}

test("audit log, activity charts and users", async ({ page, browser }) => {
  test.setTimeout(120_000);
  await signInToConsole(page);

  await test.step("a user created in the console signs in from an iPhone", async () => {
    await page.goto(`${WS}/users/new`);
    await page.getByLabel("Email", { exact: true }).fill(USER.email);
    await page.locator('input[name="password"]').fill(USER.password);
    await page.getByRole("button", { name: "Create user" }).click();
    await expect(page).toHaveURL(/\/console\/w\/e2e\/users\/[^/]+$/);
    await signInFromIphone(browser);
  });

  const userPage = page.url();

  await test.step("the user page shows the last sign-in, the device and the factors", async () => {
    await page.reload();
    await expect(page.getByText("last sign-in just now")).toBeVisible();
    const device = page.getByTestId("user-device");
    await expect(device).toHaveCount(1);
    await expect(device).toContainText("Safari 17 on iOS");
    await expect(device).toContainText("Last seen just now");
    await expect(device.getByRole("button", { name: "End session" })).toBeVisible();
    await expect(page.getByRole("heading", { name: "Sign-in factors" })).toBeVisible();
    await expect(page.getByText("No factors enrolled")).toBeVisible();
    await page.goto(`${WS}/users?q=${encodeURIComponent(USER.email)}`);
    const row = page.getByRole("row", { name: new RegExp(USER.email) });
    await expect(row).toContainText("just now");
    await expect(row).toContainText("Safari 17 on iOS");
    // One user found: counted in the singular ("1 user", never "1 users").
    await expect(page.getByText("1 user", { exact: true })).toBeVisible();
  });

  await test.step("disable, with a confirmation that says what it ends", async () => {
    await page.goto(userPage);
    await page.getByRole("button", { name: "Disable user" }).click();
    const dialog = page.getByRole("dialog", { name: `Disable ${USER.email}?` });
    await expect(dialog).toContainText("ends their 1 live sign-in session, 0 application grants");
    await dialog.getByRole("button", { name: "Disable user" }).click();
    await expect(page.getByText("This user is disabled")).toBeVisible();
    await expect(page.getByTestId("user-device")).toHaveCount(0);
    // A few profile saves: enough events to measure the log at phone width.
    for (let i = 0; i < 12; i++) {
      await page.locator('input[name="name"]').fill(`Device user ${i}`);
      await page.getByRole("button", { name: "Save profile" }).click();
      await expect(page.getByText("Saved.")).toBeVisible();
    }
  });

  await test.step("the audit log filters by actor and type and reads as one line per event", async () => {
    await page.goto(`${WS}/audit`);
    await page.getByLabel(/^Actor/).fill(OPERATOR.email);
    await page.getByLabel(/^Type/).fill("console.user.status_changed");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect(page).toHaveURL(/actor=owner%40operators.example/);
    const events = page.getByTestId("audit-event");
    const mine = events.filter({ hasText: USER.email });
    await expect(mine).toHaveCount(1);
    await expect(mine).toContainText(`${OPERATOR.email} disabled user ${USER.email} — ended 1 session`);
    await mine.locator("summary").click();
    await expect(mine.getByText("console.user.status_changed", { exact: true })).toBeVisible();
    await expect(mine.locator("pre")).toContainText('"sessions_ended": 1');

    await page.getByLabel(/^Actor/).fill("system");
    await page.getByLabel(/^Type/).fill("sign_in.*");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect(events.filter({ hasText: `Failed sign-in for ${USER.email}: wrong password` }).first()).toBeVisible();
    // The sign-in that followed, recorded as one too.
    await expect(events.filter({ hasText: `${USER.email} signed in` }).first()).toBeVisible();
  });

  await test.step("export downloads the filtered events as JSON lines", async () => {
    await page.goto(`${WS}/audit?${new URLSearchParams({ actor: OPERATOR.email, type: "console.user.*" })}`);
    const download = page.waitForEvent("download");
    await page.getByRole("link", { name: "Export JSON lines" }).click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/^audit-e2e-[0-9-]+\.jsonl$/);
    const lines = readFileSync((await file.path())!, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThanOrEqual(14);
    expect(lines.every((l) => l.type.startsWith("console.user.") && l.actor_email === OPERATOR.email)).toBe(true);
    expect(lines.some((l) => l.type === "console.user.created" && l.subject === USER.email)).toBe(true);
  });

  await test.step("at phone width, 14 events make a compact page", async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(`${WS}/audit?${new URLSearchParams({ type: "console.user.*" })}`);
    const count = await page.getByTestId("audit-event").count();
    expect(count).toBeGreaterThanOrEqual(14);
    const { height, width } = await page.evaluate(() => ({ height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth }));
    // The old table made 3,900 px of 14 events; one line each (plus the filters: type, group,
    // actor, dates, about 1,000 px stacked at this width) stays well under.
    console.log(`phone width: ${count} events, ${height} px`);
    expect(height).toBeLessThan(1_000 + 80 * Math.min(count, 50));
    if (count <= 20) expect(height).toBeLessThan(2_600);
    expect(width).toBeLessThanOrEqual(375);
    const first = page.getByTestId("audit-event").first();
    expect((await first.boundingBox())!.height).toBeLessThan(110);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  await test.step("the overview shows activity charts", async () => {
    await page.goto(WS);
    await expect(page.getByRole("heading", { name: "Activity, last 30 days" })).toBeVisible();
    for (const key of ["signIns", "failedSignIns", "tokensIssued", "reuseAlerts"]) {
      const chart = page.getByTestId(`chart-${key}`);
      await expect(chart).toBeVisible();
      await expect(chart.locator("svg rect")).toHaveCount(30);
    }
    await expect(page.getByRole("img", { name: /^Sign-ins per day/ })).toBeVisible();
    expect(Number(await page.getByTestId("chart-signIns").locator("figcaption span").nth(1).textContent())).toBeGreaterThanOrEqual(1);
    expect(Number(await page.getByTestId("chart-failedSignIns").locator("figcaption span").nth(1).textContent())).toBeGreaterThanOrEqual(1);
    await expect(page.getByTestId("chart-factors")).toContainText("Passkey");
    // At 1280 px the page does not scroll sideways (the charts' tables for screen readers once stuck out to 1,378 px).
    expect(page.viewportSize()?.width).toBe(1280);
    const { scrollWidth, clientWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
    // And the numbers are still there for screen readers.
    await expect(page.getByRole("table", { name: "Sign-ins per day (UTC)", exact: true })).toHaveCount(1);
  });
});
