/**
 * The console's Passwords page (lib/authn/passwords): screening refuses a common password beside
 * the field when an operator creates a user; a password set while screening was off is found at
 * the user's next sign-in and counted on the page, and (the workspace offers resets) that sign-in
 * asks for a new password, after which the account is no longer counted.
 */
import { expect, test } from "@playwright/test";
import { APP, ISSUER, LATCHKEY_PORT } from "./env";
import { signInToConsole } from "./console-operator";

const WS = `http://localhost:${LATCHKEY_PORT}/console/w/e2e`;

test("screening on the console's Passwords page: a common password refused beside its field; one set before is counted after its sign-in, which asks for a new one", async ({ page, browser }) => {
  await signInToConsole(page);
  await page.goto(`${WS}/passwords`);
  await expect(page.getByRole("heading", { name: "Passwords", level: 1 })).toBeVisible();
  // The e2e workspace's file turns it on (the specs that import part of the file carry it: a key left out takes its default).
  await expect(page.getByLabel("Screen new passwords")).toHaveValue("on");

  const open = (url: string) =>
    // A navigation the previous form started (to the new user's page) may still be loading: go again.
    expect(async () => {
      await page.goto(url);
    }).toPass({ timeout: 10_000 });
  const setScreening = async (value: "on" | "off") => {
    await open(`${WS}/passwords`);
    await page.getByLabel("Screen new passwords").selectOption(value);
    // The page has a form per card: the screening's own Save.
    await page.getByRole("form", { name: "Password screening" }).getByRole("button", { name: "Save", exact: true }).click();
    await expect(page.getByText("Saved. It applies to the next password set.")).toBeVisible();
  };
  const breachedCount = async () => Number(/^(\d+)/.exec((await page.getByTestId("breached-count").textContent()) ?? "")?.[1] ?? 0);
  const before = await breachedCount();

  const email = `breached-${Date.now()}@example.com`;
  const createWith = async (password: string) => {
    await open(`${WS}/users/new`);
    await page.getByLabel("Email", { exact: true }).fill(email);
    await page.getByLabel(/^Password/).fill(password);
    await page.getByLabel("The email address is verified").check();
    await page.getByRole("button", { name: "Create user" }).click();
  };
  await createWith("Password123");
  await expect(page.getByLabel(/^Password/)).toHaveAccessibleDescription(/one of the most common ones/);

  // Off for a moment: the same password is set (on again whatever happens: later specs rely on it).
  await setScreening("off");
  try {
    await createWith("Password123");
    await expect(page).toHaveURL(/\/users\/[^/]+$/);
    await expect(page.getByRole("heading", { name: email })).toBeVisible();
  } finally {
    await setScreening("on");
  }

  // The user signs in with it (through the customer application): the password is right, but known
  // from breaches, and the workspace offers resets, so the sign-in asks for a new one first; until
  // then the console counts the account.
  const context = await browser.newContext();
  const user = await context.newPage();
  await user.goto(`${APP}/start`);
  await expect(user).toHaveURL((url) => url.href.startsWith(`${ISSUER}/sign-in`));
  await user.getByLabel("Email", { exact: true }).fill(email);
  await user.getByLabel("Password", { exact: true }).fill("Password123");
  await user.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(user.getByRole("heading", { name: "Choose a new password" })).toBeVisible();
  await expect(user.getByText(/has appeared in a data breach/)).toBeVisible();
  await expect(async () => {
    await open(`${WS}/passwords`);
    expect(await breachedCount()).toBe(before + 1);
  }).toPass({ timeout: 10_000 });
  await user.getByLabel("New password").fill("Password123!");
  await user.getByRole("button", { name: "Save the new password" }).click();
  await expect(user.getByLabel("New password")).toHaveAccessibleDescription(/common|guess/);
  await user.getByLabel("New password").fill("a fresh one nobody leaked");
  await user.getByRole("button", { name: "Save the new password" }).click();
  await expect(user.getByRole("heading", { name: "Your password is changed" })).toBeVisible();
  await user.getByRole("button", { name: "Continue" }).click();
  await user.waitForURL(`${APP}/profile`);
  await context.close();
  // Changed: no longer counted.
  await open(`${WS}/passwords`);
  expect(await breachedCount()).toBe(before);
});
