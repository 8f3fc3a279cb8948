/**
 * The hosted pages in the browser's language, in Chromium: a German browser signs in through
 * German pages (a wrong password gets the German error, then the right one signs in) and sees
 * the German account-security portal, a French one sees French, both on the sign-in page and on
 * a hosted error page.
 */
import { expect, test } from "@playwright/test";
import { APP, ISSUER } from "./env";

const ADA = { email: "ada@example.com", password: "correct horse battery staple" };

test.describe("German (locale de-DE)", () => {
  test.use({ locale: "de-DE" });

  test("signs in through the German pages: a wrong password gets the German error", async ({ page }) => {
    await page.goto(`${APP}/start`);
    await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/sign-in`));
    await expect(page.locator("html")).toHaveAttribute("lang", "de");
    await expect(page.getByRole("heading", { name: "Bei E2E web anmelden" })).toBeVisible();
    await expect(page.getByText("Geschützt durch Latchkey")).toBeVisible();
    await expect(page).toHaveTitle(/^Anmelden/);

    const email = page.getByLabel("E-Mail-Adresse", { exact: true });
    const password = page.getByLabel("Passwort", { exact: true });
    await expect(page.getByRole("button", { name: "Passwort anzeigen" })).toBeVisible();
    await email.fill(ADA.email);
    await password.fill("not the password");
    await page.getByRole("button", { name: "Anmelden", exact: true }).click();
    await expect(page.getByRole("alert").filter({ hasText: "E-Mail-Adresse oder Passwort ist falsch." })).toBeVisible();
    await expect(email).toHaveValue(ADA.email);

    await password.fill(ADA.password);
    await page.getByRole("button", { name: "Anmelden", exact: true }).click();
    await page.waitForURL(`${APP}/profile`);

    // Back after the finished sign-in: said in German too.
    await page.goBack();
    await expect(page.getByRole("heading", { name: "Sie sind angemeldet" })).toBeVisible();
    await expect(page.getByRole("link", { name: "Zurück zu E2E web" })).toBeVisible();
  });
});

test.describe("German account-security portal (locale de-AT)", () => {
  test.use({ locale: "de-AT" });

  test("the direct link: German sign-in, then the German portal", async ({ page }) => {
    await page.goto(`${ISSUER}/auth/account?client_id=e2e-account`);
    await expect(page).toHaveURL((url) => url.pathname.endsWith("/sign-in"));
    await page.getByLabel("E-Mail-Adresse", { exact: true }).fill("portal@example.com");
    await page.getByLabel("Passwort", { exact: true }).fill("my security settings are mine");
    await page.getByRole("button", { name: "Anmelden", exact: true }).click();
    await expect(page).toHaveURL(`${ISSUER}/account`);
    await expect(page.locator("html")).toHaveAttribute("lang", "de");
    await expect(page.getByRole("heading", { level: 1, name: "Sicherheitseinstellungen" })).toBeVisible();
    await expect(page.getByRole("heading", { name: "Bestätigt" })).toBeVisible();
    await expect(page.getByRole("heading", { name: "Anmeldemethoden" })).toBeVisible();
    await expect(page.getByRole("link", { name: /^Zurück zu / })).toBeVisible();
  });
});

test.describe("French (locale fr-FR)", () => {
  test.use({ locale: "fr-FR" });

  test("sees the sign-in page and a hosted error page in French", async ({ page }) => {
    await page.goto(`${APP}/start`);
    await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/sign-in`));
    await expect(page.locator("html")).toHaveAttribute("lang", "fr");
    await expect(page.getByRole("heading", { name: "Se connecter à E2E web" })).toBeVisible();
    await expect(page.getByText("Sécurisé par Latchkey")).toBeVisible();
    await expect(page.getByLabel("Adresse e-mail", { exact: true })).toBeVisible();
    await expect(page.getByLabel("Mot de passe", { exact: true })).toBeVisible();
    await expect(page.getByRole("button", { name: "Se connecter", exact: true })).toBeVisible();

    const res = await page.goto(`${ISSUER}/oauth2/authorize?client_id=no-such-client`);
    expect(res?.status()).toBe(404);
    await expect(page.locator("html")).toHaveAttribute("lang", "fr");
    await expect(page.getByRole("heading", { name: "Application inconnue" })).toBeVisible();
    await expect(page.getByText("Code d’erreur")).toBeVisible();
  });
});

test("an English browser gets the pages as they always were", async ({ page }) => {
  await page.goto(`${APP}/start`);
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  await expect(page.getByRole("heading", { name: "Sign in to E2E web" })).toBeVisible();
  await expect(page.getByText("Secured by Latchkey")).toBeVisible();
  await expect(page.getByLabel("Password", { exact: true })).toBeVisible();
});
