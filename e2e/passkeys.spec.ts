/**
 * Passkeys and security keys end to end, in Chromium with a CDP virtual authenticator:
 *
 * - e2e-passkeys (passkey_enrollment "offer"): a password sign-in is offered a passkey, which is
 *   added; then a passkey sign-in (no password): amr hwk+user+mfa, acr loa:3; with user
 *   verification off, the passkey is refused.
 * - e2e-keys (MFA required): a USB security key (no resident key, no user verification) is
 *   enrolled as the second factor, then used at the next sign-in: amr pwd+hwk+mfa, acr loa:3.
 *
 * Each application has its own instance of the example customer app (openid-client), which
 * verifies the ID token; the spec reads its claims from the app's profile page.
 */
import { startCustomerApp, type CustomerAppProcess } from "./customer-app-process";
import { expect, test, type BrowserContext, type CDPSession, type Page } from "@playwright/test";
import { ISSUER } from "./env";

const PASSKEYS_APP = { port: 3115, clientId: "e2e-passkeys", secret: "e2e-passkeys-secret-0123456789abcdef0123456789" };
const KEYS_APP = { port: 3116, clientId: "e2e-keys", secret: "e2e-keys-secret-0123456789abcdef0123456789" };
const PASSKEY_USER = { email: "passkey@example.com", password: "a passkey is better than this" };
const KEY_USER = { email: "keys@example.com", password: "my key is on my keyring" };
const appUrl = (app: { port: number }) => `http://localhost:${app.port}`;

interface Claims {
  sub: string;
  amr: string[];
  acr: string;
}

const apps: CustomerAppProcess[] = [];

test.beforeAll(async () => {
  for (const app of [PASSKEYS_APP, KEYS_APP]) apps.push(await startCustomerApp({ port: app.port, clientId: app.clientId, clientSecret: app.secret }));
});

test.afterAll(async () => {
  await Promise.all(apps.map((app) => app.stop()));
});

/** A virtual authenticator on the page: a platform passkey provider, or a USB security key. */
async function virtualAuthenticator(page: Page, kind: "platform" | "usb-key"): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const options =
    kind === "platform"
      ? { protocol: "ctap2" as const, transport: "internal" as const, hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true }
      : { protocol: "ctap2" as const, transport: "usb" as const, hasResidentKey: false, hasUserVerification: false, automaticPresenceSimulation: true };
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", { options });
  return { cdp, authenticatorId };
}

async function passwordStep(page: Page, app: { port: number }, user: { email: string; password: string }): Promise<void> {
  await page.goto(`${appUrl(app)}/start`);
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/`));
  await page.getByLabel("Email", { exact: true }).fill(user.email);
  await page.getByLabel("Password", { exact: true }).fill(user.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

async function claimsOn(page: Page, app: { port: number }): Promise<Claims> {
  await page.waitForURL(`${appUrl(app)}/profile`);
  const result = JSON.parse((await page.getByTestId("result").textContent()) ?? "null") as { id_token: { claims: Claims } };
  return result.id_token.claims;
}

/** Drops the hosted session (and the app's): the next sign-in starts from the first step, on the same authenticator. */
async function forgetSessions(context: BrowserContext): Promise<void> {
  await context.clearCookies();
}

test("passkey: offered after a password sign-in, added, then signs in alone; refused without user verification", async ({ page, context }) => {
  const { cdp, authenticatorId } = await virtualAuthenticator(page, "platform");

  await passwordStep(page, PASSKEYS_APP, PASSKEY_USER);
  await expect(page.getByRole("heading", { name: "Sign in faster with a passkey" })).toBeVisible();
  await page.getByRole("button", { name: "Add a passkey" }).click();
  const withPassword = await claimsOn(page, PASSKEYS_APP);
  expect(withPassword).toMatchObject({ amr: ["pwd"], acr: "urn:latchkey:loa:1" });
  const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
  expect(credentials).toHaveLength(1);
  expect(credentials[0]).toMatchObject({ isResidentCredential: true, rpId: "localhost" });

  // A new sign-in: the passkey alone, no password typed. The sign-in page offers the passkey in
  // the email field's autofill (conditional UI), which the virtual authenticator answers at once.
  await forgetSessions(context);
  await page.goto(`${appUrl(PASSKEYS_APP)}/start`);
  const viaAutofill = await claimsOn(page, PASSKEYS_APP);
  expect(viaAutofill).toMatchObject({ sub: withPassword.sub, amr: ["hwk", "user", "mfa"], acr: "urn:latchkey:loa:3" });

  // The button: with the authenticator not answering on its own, autofill waits; the button's
  // prompt replaces it and is answered.
  await cdp.send("WebAuthn.setAutomaticPresenceSimulation", { authenticatorId, enabled: false });
  await forgetSessions(context);
  await page.goto(`${appUrl(PASSKEYS_APP)}/start`);
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/sign-in`));
  await expect(page.getByLabel("Email", { exact: true })).toHaveAttribute("autocomplete", "username webauthn");
  const button = page.getByRole("button", { name: "Sign in with a passkey" });
  await expect(button).toBeVisible();
  await cdp.send("WebAuthn.setAutomaticPresenceSimulation", { authenticatorId, enabled: true });
  await button.click();
  const viaButton = await claimsOn(page, PASSKEYS_APP);
  expect(viaButton).toMatchObject({ sub: withPassword.sub, amr: ["hwk", "user", "mfa"], acr: "urn:latchkey:loa:3" });

  // The authenticator can no longer verify the user: the passkey is refused and the sign-in stays on the page.
  await cdp.send("WebAuthn.setUserVerified", { authenticatorId, isUserVerified: false });
  await forgetSessions(context);
  await page.goto(`${appUrl(PASSKEYS_APP)}/start`);
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/sign-in`));
  await button.click();
  // The browser itself refuses (the options require user verification): nothing was posted.
  await expect(page.getByText("The passkey or security key could not be verified")).toBeVisible();
  expect(new URL(page.url()).searchParams.get("error")).toBeNull();

  // A page whose options were altered to not require it: the browser posts an assertion without
  // user verification, and the server refuses it.
  await cdp.send("WebAuthn.setAutomaticPresenceSimulation", { authenticatorId, enabled: false });
  await page.route(`${ISSUER}/sign-in?*`, async (route) => {
    const response = await route.fetch();
    const body = (await response.text()).replace(/(userVerification\\*"\s*:\s*\\*")required/g, "$1discouraged");
    await route.fulfill({ response, body });
  });
  await page.reload();
  await expect(button).toBeVisible();
  await cdp.send("WebAuthn.setAutomaticPresenceSimulation", { authenticatorId, enabled: true });
  await button.click();
  // The page the refusal returns to is the real one again (its options require user verification).
  await page.unroute(`${ISSUER}/sign-in?*`);
  await page.waitForURL((url) => url.searchParams.get("error") === "webauthn_failed");
  await expect(page.getByText("The passkey or security key could not be verified").first()).toBeVisible();
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/sign-in`));
});

test("security key: enrolled as the second factor where MFA is required, then asked for at the next sign-in", async ({ page, context }) => {
  const { cdp, authenticatorId } = await virtualAuthenticator(page, "usb-key");

  await passwordStep(page, KEYS_APP, KEY_USER);
  await expect(page.getByRole("heading", { name: "Set up two-step verification" })).toBeVisible();
  await page.getByRole("button", { name: "Add a security key" }).click();
  await expect(page.getByRole("heading", { name: "Save your recovery codes" })).toBeVisible();
  await page.getByRole("button", { name: "I have saved these codes" }).click();
  const enrolled = await claimsOn(page, KEYS_APP);
  expect(enrolled).toMatchObject({ amr: ["pwd", "hwk", "mfa"], acr: "urn:latchkey:loa:3" });
  const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
  expect(credentials).toHaveLength(1);
  expect(credentials[0].isResidentCredential).toBe(false);

  await forgetSessions(context);
  await passwordStep(page, KEYS_APP, KEY_USER);
  await expect(page.getByRole("heading", { name: "Confirm it's you" })).toBeVisible();
  await page.getByRole("button", { name: "Use your security key" }).click();
  const second = await claimsOn(page, KEYS_APP);
  expect(second).toMatchObject({ sub: enrolled.sub, amr: ["pwd", "hwk", "mfa"], acr: "urn:latchkey:loa:3" });
});
