/**
 * The demo user's hosted sign-in, as the demo application starts it: the demo password, then
 * "Not now" on the passkey offer the demo workspace makes (unless this browser already said it),
 * back at `<base>/demo`. Shared by the
 * specs that sign in to the demo (demo.spec.ts, first-start.spec.ts).
 */
import { expect, type Page } from "@playwright/test";
import { DEMO_USER } from "../lib/workspaces/demo";

export async function demoHostedSignIn(page: Page, base: string, options: { passkeyOffer?: boolean } = {}): Promise<void> {
  await expect(page).toHaveURL(new RegExp(`^${base}/t/demo/sign-in`));
  await page.getByLabel("Email", { exact: true }).fill(DEMO_USER.email);
  await page.getByLabel("Password", { exact: true }).fill(DEMO_USER.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  // A browser that said "Not now" is not offered a passkey again for 30 days (docs/sign-in.md).
  if (options.passkeyOffer ?? true) await page.getByRole("button", { name: "Not now" }).click();
  await expect(page).toHaveURL(`${base}/demo`);
}
