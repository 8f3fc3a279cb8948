/**
 * The console with JavaScript turned off in Chromium (docs/console.md: it "also works without
 * JavaScript"): the first-run setup (or, on a server whose setup is done, the sign-in through the
 * system workspace's hosted page), signing out and in again through that page, a new workspace
 * with a validation error first, and a new application. Every form is posted by the browser itself, multipart with the page's `$ACTION_*`
 * fields, judged by the same-origin rule of proxy.ts; no answer is a 500. The console's pages send
 * `Referrer-Policy: same-origin`, so the browser names our own origin in `Origin`; the hosted
 * sign-in keeps `no-referrer` (its posts say `Origin: null` and `Sec-Fetch-Site: same-origin`).
 */
import { expect, test, type Page } from "@playwright/test";
import { CONSOLE_BASE as BASE, FIRST_OPERATOR, SETUP_TOKEN } from "./console-operator";

const RUN = Date.now().toString(36);
const WS = `nojs-${RUN}`;

/** Every answer of 500 or more that the page received, and every form post with the Origin it carried. */
function watch(page: Page): { failures: string[]; posts: { url: string; origin: string | undefined; site: string | undefined; status: number }[] } {
  const failures: string[] = [];
  const posts: { url: string; origin: string | undefined; site: string | undefined; status: number }[] = [];
  page.on("response", async (response) => {
    if (response.status() >= 500) failures.push(`${response.status()} ${response.request().method()} ${response.url()}`);
    const request = response.request();
    if (request.method() !== "POST") return;
    const headers = await request.allHeaders();
    posts.push({ url: new URL(request.url()).pathname, origin: headers.origin, site: headers["sec-fetch-site"], status: response.status() });
  });
  return { failures, posts };
}

/**
 * Signs in from wherever the console sent the browser: its sign-in page offers a link (no script
 * follows it), then the system workspace's hosted page (no script runs there either), unless the
 * browser's hosted session passes straight through.
 */
async function signIn(page: Page): Promise<void> {
  if (new URL(page.url()).pathname === "/console/sign-in") await page.getByRole("link", { name: "Continue to sign in" }).click();
  if (new URL(page.url()).pathname === "/t/system/sign-in") {
    const email = page.getByLabel("Email", { exact: true });
    if ((await email.inputValue()) === "") await email.fill(FIRST_OPERATOR.email);
    await page.getByLabel("Password", { exact: true }).fill(FIRST_OPERATOR.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
  }
  await expect(page).toHaveURL(`${BASE}/console`);
  await expect(page.getByRole("heading", { name: "Workspaces", level: 1 })).toBeVisible();
}

test("the console without JavaScript: setup, sign-in, a workspace and an application", async ({ browser }) => {
  test.setTimeout(120_000);
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  const { failures, posts } = watch(page);

  await test.step("first-run setup, or the sign-in when another spec did it", async () => {
    const setup = await page.goto(`${BASE}/console/setup?token=${SETUP_TOKEN}`);
    expect(setup!.headers()["referrer-policy"]).toBe("same-origin");
    const heading = page.getByRole("heading", { level: 1 });
    if ((await heading.textContent()) === "Create the first operator") {
      const form = page.getByRole("form", { name: "Create the first operator" });
      await form.getByLabel("Email").fill(FIRST_OPERATOR.email);
      await form.getByLabel("Name").fill(FIRST_OPERATOR.name);
      await form.getByLabel("Password", { exact: true }).fill(FIRST_OPERATOR.password);
      await form.getByLabel("Repeat the password").fill(FIRST_OPERATOR.password);
      await form.getByRole("button", { name: "Create operator and sign in" }).click();
      // Without a script to move on, the next page offers the link.
      await expect(page.getByRole("heading", { name: "Operator created", level: 1 })).toBeVisible();
      await page.getByRole("link", { name: "Continue to the console" }).click();
    } else {
      await page.goto(`${BASE}/console`);
    }
    // The setup's hosted session signs the operator straight in; without one, the hosted sign-in page.
    await signIn(page);
  });

  await test.step("sign out, and back in through the system workspace's hosted sign-in page", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(`${BASE}/console/signed-out`);
    await page.goto(`${BASE}/console`);
    await expect(page).toHaveURL((url) => url.pathname === "/console/sign-in");
    await signIn(page);
    // The hosted page keeps no-referrer: its form said Origin null, and where it came from.
    expect(posts.find((p) => p.url === "/t/system/sign-in/password")).toMatchObject({ origin: "null", site: "same-origin", status: 303 });
  });

  await test.step("create a workspace, after a validation error", async () => {
    const form = page.getByRole("form", { name: "Create a workspace" });
    await form.getByLabel("Id").fill("Not Valid!");
    await form.getByLabel("Name").fill("No script");
    await form.getByRole("button", { name: "Create workspace" }).click();
    // The page comes back from the server with the error and what was typed.
    await expect(page.getByRole("form", { name: "Create a workspace" }).getByText("Use 2–63 characters")).toBeVisible();
    await expect(page.getByRole("form", { name: "Create a workspace" }).getByLabel("Name")).toHaveValue("No script");
    await page.getByRole("form", { name: "Create a workspace" }).getByLabel("Id").fill(WS);
    await page.getByRole("form", { name: "Create a workspace" }).getByRole("button", { name: "Create workspace" }).click();
    await expect(page).toHaveURL(`${BASE}/console/w/${WS}`);
    await expect(page.getByText(`${BASE}/t/${WS}`, { exact: true })).toBeVisible();
  });

  await test.step("create an application", async () => {
    await page.goto(`${BASE}/console/w/${WS}/applications/new`);
    const form = page.getByRole("form", { name: "New application" });
    await form.getByLabel("Name").fill("No-script app");
    await form.getByLabel("Client id").fill("no-script-app");
    await form.getByLabel(/^Redirect URIs/).fill("http://127.0.0.1:9/callback");
    await form.getByRole("button", { name: "Create application" }).click();
    await expect(page).toHaveURL(`${BASE}/console/w/${WS}/applications/no-script-app`);
    // The page's tabs are links: the settings tab, and a form posted from it comes back to it.
    await page.getByRole("navigation", { name: "Application sections" }).getByRole("link", { name: "Settings" }).click();
    await expect(page).toHaveURL(`${BASE}/console/w/${WS}/applications/no-script-app?tab=settings`);
    await expect(page.getByLabel(/^Redirect URIs/)).toHaveValue("http://127.0.0.1:9/callback");
    const settings = page.getByRole("form", { name: "Application settings" });
    await settings.getByLabel("Name").fill("No-script app, renamed");
    await settings.getByRole("button", { name: "Save settings" }).click();
    await expect(page).toHaveURL((url) => url.pathname === `/console/w/${WS}/applications/no-script-app` && url.searchParams.get("tab") === "settings");
    await expect(page.getByRole("form", { name: "Application settings" }).getByLabel("Name")).toHaveValue("No-script app, renamed");
    await page.goto(`${BASE}/console/w/${WS}/applications`);
    await expect(page.getByRole("link", { name: "No-script app, renamed" })).toBeVisible();
  });

  // The console's own forms carried our origin; nothing answered 500.
  const consolePosts = posts.filter((p) => p.url.startsWith("/console"));
  expect(consolePosts.length).toBeGreaterThanOrEqual(3);
  for (const post of consolePosts) expect(post).toMatchObject({ origin: BASE, site: "same-origin" });
  expect(consolePosts.every((p) => p.status < 400)).toBe(true);
  expect(failures).toEqual([]);
  await context.close();
});
