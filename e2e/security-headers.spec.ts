/**
 * The pages work under their strict Content-Security-Policy (proxy.ts): Chromium reports no
 * violation while a user signs in through the hosted page and while an operator uses the console,
 * Next's own scripts run (their nonce matches), and no page can be framed by another site.
 *
 * Every page is watched twice: Chromium's console ("Refused to …") and the document's
 * `securitypolicyviolation` events (an init script, which CSP does not apply to).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test, type ConsoleMessage, type Page } from "@playwright/test";
import { APP, ISSUER, LATCHKEY_PORT } from "./env";

const BASE = `http://localhost:${LATCHKEY_PORT}`;
const ADA = { email: "ada@example.com", password: "correct horse battery staple" };
// The same first operator as e2e/console.spec.ts, so either spec may run first.
const SETUP_TOKEN = process.env.CONSOLE_SETUP_TOKEN ?? "e2e-console-setup-token-0123456789abcdef";
const FIRST = { email: "owner@operators.example", name: "First Operator", password: "first operator passphrase" };

/** Collects every CSP violation the page reports, from the console and from the DOM event. */
async function watchViolations(page: Page): Promise<string[]> {
  const violations: string[] = [];
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      console.error(`securitypolicyviolation: ${event.violatedDirective} blocked ${event.blockedURI || "inline"} in ${event.documentURI}`);
    });
  });
  page.on("console", (message: ConsoleMessage) => {
    const text = message.text();
    if (/Refused to|Content Security Policy|securitypolicyviolation/i.test(text)) violations.push(`${page.url()}: ${text}`);
  });
  return violations;
}

/** Next's client runtime started on this page: its scripts carried the nonce and ran. */
async function expectNextScriptsRan(page: Page): Promise<void> {
  await expect.poll(() => page.evaluate(() => (window as unknown as { next?: { appDir?: boolean } }).next?.appDir === true)).toBe(true);
}

function expectStrictPolicy(policy: string | null, { hosted }: { hosted: boolean }): void {
  expect(policy).toBeTruthy();
  expect(policy).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
  expect(policy).toContain("default-src 'self'");
  expect(policy).toContain("frame-ancestors 'none'");
  expect(policy).not.toContain("unsafe-inline");
  if (!hosted) expect(policy).toContain("form-action 'self'");
}

test("signing in through the hosted page: a strict policy, Next's scripts run, no violation", async ({ page }) => {
  const violations = await watchViolations(page);
  const signInPage = page.waitForResponse((r) => r.url().startsWith(`${ISSUER}/sign-in`) && r.request().method() === "GET");
  await page.goto(`${APP}/start`);
  const response = await signInPage;
  const headers = await response.allHeaders();
  expectStrictPolicy(headers["content-security-policy"], { hosted: true });
  expect(headers["referrer-policy"]).toBe("no-referrer");
  expect(headers["x-content-type-options"]).toBe("nosniff");
  await expectNextScriptsRan(page);

  // A wrong password first (the page comes back with its error), then the right one.
  await page.getByLabel("Email", { exact: true }).fill(ADA.email);
  await page.getByLabel("Password", { exact: true }).fill("not the password");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByText("The email or password is incorrect.")).toBeVisible();
  await expectNextScriptsRan(page);
  await page.getByLabel("Email", { exact: true }).fill(ADA.email);
  await page.getByLabel("Password", { exact: true }).fill(ADA.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  // The form's answer redirects to the application's callback on another origin.
  await page.waitForURL(`${APP}/profile`);
  expect(violations).toEqual([]);
});

test("using the console: pages, client-side navigation and a server action, no violation", async ({ page }) => {
  test.setTimeout(120_000);
  const violations = await watchViolations(page);
  const setup = await page.goto(`${BASE}/console/setup?token=${SETUP_TOKEN}`);
  expectStrictPolicy((await setup!.allHeaders())["content-security-policy"], { hosted: false });
  await expectNextScriptsRan(page);
  const heading = page.getByRole("heading", { level: 1 });
  if ((await heading.textContent()) === "Create the first operator") {
    await page.getByLabel("Email").fill(FIRST.email);
    await page.getByLabel("Name").fill(FIRST.name);
    await page.getByLabel("Password", { exact: true }).fill(FIRST.password);
    await page.getByLabel("Repeat the password").fill(FIRST.password);
    await page.getByRole("button", { name: "Create operator" }).click();
  } else {
    await expect(heading).toHaveText("Setup is complete");
    await page.goto(`${BASE}/console`);
  }
  // Setup signs the new operator in; a server set up earlier asks for the password.
  await page.waitForURL((url) => url.pathname === "/console" || url.pathname === "/t/system/sign-in");
  if (new URL(page.url()).pathname === "/t/system/sign-in") {
    await page.getByLabel("Email", { exact: true }).fill(FIRST.email);
    await page.getByLabel("Password", { exact: true }).fill(FIRST.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
  }
  await expect(page).toHaveURL(`${BASE}/console`);
  await expect(page.getByRole("heading", { name: "Workspaces", level: 1 })).toBeVisible();
  await expectNextScriptsRan(page);

  // A server action that answers with a validation error: the client renders it beside the field.
  const form = page.getByRole("form", { name: "Create a workspace" });
  await form.getByLabel("Id").fill("Not Valid!");
  await form.getByLabel("Name").fill("Nothing");
  await form.getByRole("button", { name: "Create workspace" }).click();
  await expect(form.getByText("Use 2–63 characters")).toBeVisible();

  // A workspace's pages, reached through the client router (no full page load).
  await page.goto(`${BASE}/console/w/e2e`);
  await expectNextScriptsRan(page);
  await page.evaluate(() => ((window as unknown as { loadedOnce?: boolean }).loadedOnce = true));
  await page.getByRole("link", { name: "Applications", exact: true }).first().click();
  await expect(page).toHaveURL(`${BASE}/console/w/e2e/applications`);
  await expect(page.getByRole("heading", { name: "Applications", level: 1 })).toBeVisible();
  expect(await page.evaluate(() => (window as unknown as { loadedOnce?: boolean }).loadedOnce)).toBe(true);
  expect(violations).toEqual([]);
});

test("the landing page sends the security headers and cannot be framed by another site", async ({ page, request }) => {
  const landing = await request.get(`${BASE}/`);
  expect(landing.status()).toBe(200);
  const headers = landing.headers();
  expectStrictPolicy(headers["content-security-policy"], { hosted: false });
  expect(headers["x-frame-options"]).toBe("DENY");
  expect(headers["referrer-policy"]).toBe("no-referrer");
  expect(headers["x-content-type-options"]).toBe("nosniff");

  // Another origin tries to frame `/`, the console and the hosted sign-in page.
  const framed = [`${BASE}/`, `${BASE}/console`, `${ISSUER}/sign-in`];
  const site = http.createServer((_req, res) =>
    res.writeHead(200, { "content-type": "text/html" }).end(`<h1>Other site</h1>${framed.map((src) => `<iframe src="${src}"></iframe>`).join("")}`),
  );
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  try {
    await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`, { waitUntil: "load" });
    await expect(page.getByRole("heading", { name: "Other site" })).toBeVisible();
    const frames = page.frames().filter((f) => f !== page.mainFrame());
    expect(frames).toHaveLength(framed.length);
    for (const frame of frames) {
      // A refused frame holds the browser's error page, never Latchkey's.
      expect(frame.url()).toMatch(/^chrome-error:/);
      expect(await frame.content()).not.toContain("Latchkey");
    }
  } finally {
    await new Promise<void>((resolve) => site.close(() => resolve()));
  }
});
