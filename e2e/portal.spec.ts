/**
 * The account-security portal on a phone-width screen, entered by the direct link without any
 * application in between: the hosted sign-in, the portal page (nothing wider than the screen, the
 * "back" link to the application's origin), the page without its portal cookie ("session ended"),
 * and an application that does not offer the portal ("Not available").
 */
import { expect, test, type Page } from "@playwright/test";
import { ISSUER } from "./env";

const PHONE = { width: 360, height: 740 };
const CLIENT_ID = "e2e-account";
const APP_ORIGIN = "http://localhost:3117";
const USER = { email: "portal@example.com", password: "my security settings are mine" };

test.use({ viewport: PHONE, isMobile: true, hasTouch: true });

async function fitsTheScreen(page: Page): Promise<void> {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
}

test("the direct link at phone width: sign in, the portal fits the screen, back to the application's origin; without the portal cookie, the session has ended", async ({ page, context }) => {
  await page.goto(`${ISSUER}/auth/account?client_id=${CLIENT_ID}`);
  await expect(page).toHaveURL((url) => url.pathname.endsWith("/sign-in"));
  await page.getByLabel("Email", { exact: true }).fill(USER.email);
  await page.getByLabel("Password", { exact: true }).fill(USER.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();

  await expect(page).toHaveURL(`${ISSUER}/account`);
  await expect(page.getByRole("heading", { level: 1, name: "Security settings" })).toBeVisible();
  await expect(page.getByText(USER.email)).toBeVisible();
  // Just signed in with the password: confirmed for ten minutes.
  await expect(page.getByRole("heading", { name: "Confirmed" })).toBeVisible();
  await fitsTheScreen(page);
  await expect(page.getByRole("link", { name: /^Back to / })).toHaveAttribute("href", `${APP_ORIGIN}/`);

  // The direct link again: the live session is reused (no sign-in page).
  await page.goto(`${ISSUER}/auth/account?client_id=${CLIENT_ID}`);
  await expect(page).toHaveURL(`${ISSUER}/account`);

  const cookies = await context.cookies();
  await context.clearCookies();
  await context.addCookies(cookies.filter((c) => c.name !== "lk_portal"));
  await page.goto(`${ISSUER}/account`);
  await expect(page.getByRole("heading", { name: "Your security settings session has ended" })).toBeVisible();
  await fitsTheScreen(page);
});

test("an application that does not offer the portal: the hosted 'Not available' page", async ({ page }) => {
  const response = await page.goto(`${ISSUER}/auth/account?client_id=e2e-web`);
  expect(response!.status()).toBe(404);
  await expect(page.getByText("Account security settings are not available for this application.")).toBeVisible();
  expect(response!.headers()["referrer-policy"]).toBe("no-referrer");
  await fitsTheScreen(page);
});
