/**
 * Hosted sign-in page polish, in Chromium: a wrong password keeps the typed email (not in the
 * URL), the show-password toggle (a plain password field without JavaScript), going back after a
 * finished sign-in, and the autocomplete attributes password managers and passkeys rely on.
 */
import { expect, test, type Page } from "@playwright/test";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "../lib/authn/password-rules";
import { APP, ISSUER, SMTP_PORT } from "./env";
import { codeOf, SmtpInbox } from "./smtp-inbox";

const ADA = { email: "ada@example.com", password: "correct horse battery staple" };

async function toSignInPage(page: Page): Promise<void> {
  await page.goto(`${APP}/start`);
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/sign-in`));
}

test("a wrong password keeps the email; the toggle shows the password; back after signing in says it is done", async ({ page }) => {
  await toSignInPage(page);
  const email = page.getByLabel("Email", { exact: true });
  const password = page.getByLabel("Password", { exact: true });
  // The application allows passkeys: the identifier field also offers them (conditional UI).
  await expect(email).toHaveAttribute("autocomplete", "username webauthn");
  await expect(password).toHaveAttribute("autocomplete", "current-password");
  // The password form, then one "or" above the other ways, the code and the passkey, not one above each.
  await expect(page.getByRole("button", { name: "Sign in with a passkey" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Email me a sign-in code" })).toBeVisible();
  await expect(page.locator('main div[aria-hidden="true"]').filter({ hasText: /^or$/ })).toHaveCount(1);

  const toggle = page.getByRole("button", { name: "Show password" });
  await expect(toggle).toHaveAttribute("aria-pressed", "false");
  await password.fill("not the password");
  await toggle.click();
  await expect(password).toHaveAttribute("type", "text");
  await expect(toggle).toHaveAttribute("aria-pressed", "true");
  await toggle.click();
  await expect(password).toHaveAttribute("type", "password");

  const typed = "Ada@Example.com";
  await email.fill(typed);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByRole("alert").filter({ hasText: /email or password/i })).toBeVisible();
  await expect(email).toHaveValue(typed);
  await expect(password).toHaveValue("");
  await expect(password).toBeFocused();
  expect(page.url().toLowerCase()).not.toContain("example.com");

  // Submitting while the password is shown still signs in.
  await password.fill(ADA.password);
  await toggle.click();
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(`${APP}/profile`);

  await page.goBack();
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/sign-in`));
  await expect(page.getByRole("heading", { name: "You're signed in" })).toBeVisible();
  await expect(page.getByText(/already completed/)).toBeVisible();
  await expect(page.getByText(/expired/)).toHaveCount(0);
  await expect(page.getByRole("link", { name: "Back to E2E web" })).toHaveAttribute("href", `${APP}/`);
});

test.describe("without JavaScript", () => {
  test.use({ javaScriptEnabled: false });

  test("the password is a plain field without a toggle, and a wrong password still keeps the email", async ({ page }) => {
    await toSignInPage(page);
    await expect(page.getByLabel("Password", { exact: true })).toHaveAttribute("type", "password");
    await expect(page.getByRole("button", { name: "Show password" })).toHaveCount(0);
    await page.getByLabel("Email", { exact: true }).fill(ADA.email);
    await page.getByLabel("Password", { exact: true }).fill("still not the password");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect(page.getByRole("alert").filter({ hasText: /email or password/i })).toBeVisible();
    await expect(page.getByLabel("Email", { exact: true })).toHaveValue(ADA.email);
  });
});

test.describe("sign-up", () => {
  const inbox = new SmtpInbox();
  test.beforeAll(async () => {
    await inbox.listen(SMTP_PORT);
  });
  test.afterAll(async () => {
    await inbox.close();
  });

  test("the code field is a numeric one-time code; the new password is a new-password field with its username", async ({ page }) => {
    const address = `hosted-pages-${Date.now()}@example.com`;
    await toSignInPage(page);
    await page.getByRole("link", { name: "Create an account" }).click();
    await page.getByLabel("Email", { exact: true }).fill(address);
    const since = inbox.messages.length;
    await page.getByRole("button", { name: "Continue" }).click();
    const code = page.getByLabel("Code", { exact: true });
    await expect(code).toHaveAttribute("autocomplete", "one-time-code");
    await expect(code).toHaveAttribute("inputmode", "numeric");
    await code.fill(codeOf(await inbox.waitFor(address, { since })));
    await page.getByRole("button", { name: "Continue" }).click();

    const password = page.getByLabel("Choose a password");
    await expect(password).toHaveAttribute("autocomplete", "new-password");
    // The browser's own check asks what the server's does (lib/authn/password-rules.ts).
    await expect(password).toHaveAttribute("minlength", String(PASSWORD_MIN_LENGTH));
    await expect(password).toHaveAttribute("maxlength", String(PASSWORD_MAX_LENGTH));
    await expect(page.locator('input[autocomplete="username"]')).toHaveValue(address);
    await password.fill("a new password for the toggle");
    await page.getByRole("button", { name: "Show password" }).click();
    await expect(password).toHaveAttribute("type", "text");
    await page.getByRole("button", { name: "Create account", exact: true }).click();
    await page.waitForURL(`${APP}/profile`);
  });
});

test("an address that names nothing gets Latchkey's not-found page, and the favicon is served", async ({ page, request }) => {
  const base = new URL(ISSUER).origin;
  const response = await page.goto(`${base}/nope`);
  expect(response?.status()).toBe(404);
  await expect(page).toHaveTitle("Page not found · Latchkey");
  await expect(page.getByRole("heading", { level: 1, name: "Page not found" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Go to the Latchkey home page" })).toHaveAttribute("href", "/");
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  // Not Next's bare page.
  await expect(page.getByText("This page could not be found")).toHaveCount(0);
  // The favicon: browsers ask for /favicon.ico; pages link it and the SVG icon.
  const favicon = await request.get(`${base}/favicon.ico`);
  expect(favicon.status()).toBe(200);
  expect(favicon.headers()["content-type"]).toBe("image/x-icon");
  await expect(page.locator('link[rel="icon"][href^="/favicon.ico"]')).toHaveCount(1);
  const svg = page.locator('link[rel="icon"][type="image/svg+xml"]');
  await expect(svg).toHaveCount(1);
  expect((await request.get(new URL((await svg.getAttribute("href"))!, base).href)).status()).toBe(200);
});

/**
 * The first step's page is rendered by Next once per shape and then answered from that render with
 * each request's own values (lib/server/sign-in-page.ts). A query value no other test sends makes
 * the first of two sign-ins below Next's own render and the second the kept one.
 */
test("the sign-in page answered from its kept render is byte for byte Next's render with its own values, and works", async ({ browser }) => {
  const tag = `e2e${Date.now().toString(36)}`;
  const seen: { url: string; body: string; headers: Record<string, string>; context: Awaited<ReturnType<typeof browser.newContext>> }[] = [];
  for (let i = 0; i < 2; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await toSignInPage(page);
    const url = `${page.url()}&error=${tag}`;
    const res = await context.request.get(url);
    expect(res.status()).toBe(200);
    seen.push({ url, body: await res.text(), headers: res.headers(), context });
  }
  const valuesOf = (s: (typeof seen)[number]) => {
    const tx = new URL(s.url).searchParams.get("tx")!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(s.body)![1];
    const challenge = /challenge[^A-Za-z0-9_-]+([A-Za-z0-9_-]{43})/.exec(s.body)![1];
    const nonce = /'nonce-([^']+)'/.exec(s.headers["content-security-policy"])![1];
    return [tx, csrf, challenge, nonce];
  };
  const [rendered, kept] = seen;
  // Next streams its render; the kept one is answered whole, with its length.
  expect(rendered.headers["transfer-encoding"]).toBe("chunked");
  expect(kept.headers["content-length"]).toBeDefined();
  // Compressed alike (the request context takes gzip).
  expect(kept.headers["content-encoding"]).toBe(rendered.headers["content-encoding"]);
  const [renderedValues, keptValues] = [valuesOf(rendered), valuesOf(kept)];
  // Every value is the request's own.
  renderedValues.forEach((value, i) => expect(keptValues[i]).not.toBe(value));
  for (const value of renderedValues) expect(kept.body).not.toContain(value);
  const normal = (text: string, values: string[]) => values.reduce((t, v, i) => t.replaceAll(v, `#${i}#`), text);
  expect(normal(kept.body, keptValues)).toBe(normal(rendered.body, renderedValues));
  for (const name of ["content-security-policy", "link", "vary", "cache-control", "content-type", "referrer-policy", "x-frame-options", "x-content-type-options"]) {
    expect(normal(kept.headers[name] ?? "", keptValues), name).toBe(normal(rendered.headers[name] ?? "", renderedValues));
  }
  await rendered.context.close();

  // The kept page in Chromium: its scripts run under its nonce (no policy refusal), it hydrates (the
  // show-password toggle), and it signs in.
  const page = await kept.context.newPage();
  const refusals: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") refusals.push(message.text());
  });
  await page.goto(kept.url);
  const toggle = page.getByRole("button", { name: "Show password" });
  await page.getByLabel("Password", { exact: true }).fill(ADA.password);
  await toggle.click();
  await expect(page.getByLabel("Password", { exact: true })).toHaveAttribute("type", "text");
  await page.getByLabel("Email", { exact: true }).fill(ADA.email);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(`${APP}/profile`);
  expect(refusals).toEqual([]);
  await kept.context.close();
});
