import { expect, test, type Page } from "@playwright/test";
import { APP, ISSUER } from "./env";

// The customer app (e2e/customer-app.ts) drives refresh, introspection, revocation and hosted
// logout through openid-client, from the session a real browser sign-in created.

const CLIENT_ID = "e2e-web";
const ADA = { email: "ada@example.com", password: "correct horse battery staple" };
const INTROSPECTION_FIELDS = ["active", "aud", "client_id", "exp", "iss", "scope", "sub", "token_type"];

interface SessionResult {
  id_token: { claims: Record<string, unknown> };
  session_check: Record<string, unknown>;
}

function recordNavigations(page: Page): string[] {
  const urls: string[] = [];
  page.on("request", (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) urls.push(request.url());
  });
  return urls;
}

async function signIn(page: Page): Promise<SessionResult> {
  await page.goto(`${APP}/start`);
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/`));
  await page.getByLabel("Email", { exact: true }).fill(ADA.email);
  await page.getByLabel("Password", { exact: true }).fill(ADA.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(`${APP}/profile`);
  return JSON.parse((await page.getByTestId("result").textContent()) ?? "null") as SessionResult;
}

/** A same-origin POST from the app's page: the browser sends its session cookie and Origin. */
async function appPost(page: Page, path: string): Promise<{ status: number; body: Record<string, any> }> {
  return page.evaluate(async (p) => {
    const response = await fetch(p, { method: "POST" });
    return { status: response.status, body: await response.json() };
  }, path);
}

/** Submits a form POST from the app's page, as a sign-out button would. */
async function submitForm(page: Page, action: string): Promise<void> {
  await page.evaluate((a) => {
    const form = document.createElement("form");
    form.method = "post";
    form.action = a;
    document.body.append(form);
    form.submit();
  }, action);
}

test("refresh, introspection and revocation through openid-client; logout after revocation fails as SPEC warns", async ({ page }) => {
  const { id_token } = await signIn(page);
  const sub = id_token.claims.sub;

  // Refresh: a rotated pair, no new ID token, and the new access token passes the session check.
  const refreshed = await appPost(page, "/lifecycle/refresh");
  expect(refreshed.status).toBe(200);
  expect(refreshed.body).toMatchObject({
    token_type: "bearer", // openid-client normalizes token_type to lower case
    expires_in: 300,
    scope: "openid email profile",
    id_token: false,
    refresh_token_rotated: true,
    access_token_changed: true,
  });
  expect(refreshed.body.session_check).toMatchObject({ active: true, iss: ISSUER, client_id: CLIENT_ID, sub });

  // Introspection of the client's own tokens.
  const introspected = await appPost(page, "/lifecycle/introspect");
  expect(introspected.status).toBe(200);
  const access = introspected.body.access_token;
  expect(Object.keys(access).sort()).toEqual(INTROSPECTION_FIELDS);
  expect(access).toMatchObject({ active: true, client_id: CLIENT_ID, sub, iss: ISSUER, aud: CLIENT_ID, scope: "openid email profile", token_type: "Bearer" });
  expect(access.exp).toBeGreaterThan(Date.now() / 1000);
  expect(access.exp).toBeLessThanOrEqual(Date.now() / 1000 + 305);
  expect(introspected.body.refresh_token).toMatchObject({ active: true, client_id: CLIENT_ID, sub, token_type: "refresh_token" });

  // Revocation of the refresh token ends the whole grant, access token included.
  const revoked = await appPost(page, "/lifecycle/revoke");
  expect(revoked.status).toBe(200);
  expect(revoked.body).toEqual({ revoked: true, session_check: { status: 401, ok: false } });
  const after = await appPost(page, "/lifecycle/introspect");
  expect(after.body.access_token).toEqual({ active: false });
  expect(after.body.refresh_token).toEqual({ active: false });

  // A refresh now fails, and the app ends its local session instead of retrying.
  const refused = await appPost(page, "/lifecycle/refresh");
  expect(refused.status).toBe(401);
  expect(refused.body.detail).toContain("invalid_grant");
  expect((await appPost(page, "/lifecycle/introspect")).status).toBe(401);

  // Hosted logout after revocation: the grant it needs is gone, so Latchkey ends nothing and sends
  // the browser nowhere by itself; its page says the user is signed out of the application and
  // offers the registered destination as a link (no dead end).
  const navigations = recordNavigations(page);
  await submitForm(page, "/lifecycle/logout");
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/oidc/logout?`));
  await expect(page.getByRole("heading")).toHaveText("You are signed out of E2E web");
  await expect(page.getByText("You are still signed in to Latchkey in this browser")).toBeVisible();
  await page.waitForTimeout(500);
  expect(navigations.some((u) => u.startsWith(`${APP}/signed-out`))).toBe(false);
  await page.getByRole("link", { name: "Continue to E2E web" }).click();
  await expect(page).toHaveURL(`${APP}/signed-out`);
});

test("hosted logout through buildEndSessionUrl, then revocation: the session ends for good", async ({ page }) => {
  await signIn(page);
  const navigations = recordNavigations(page);
  await submitForm(page, "/lifecycle/logout");
  await page.waitForURL(`${APP}/signed-out`);

  // The end-session request carried exactly client_id and post_logout_redirect_uri.
  const logoutUrl = navigations.map((u) => new URL(u)).find((u) => u.href.startsWith(`${ISSUER}/oidc/logout`));
  expect(logoutUrl, "the browser went through the hosted logout").toBeDefined();
  expect([...logoutUrl!.searchParams.keys()].sort()).toEqual(["client_id", "post_logout_redirect_uri"]);
  expect(logoutUrl!.searchParams.get("client_id")).toBe(CLIENT_ID);
  expect(logoutUrl!.searchParams.get("post_logout_redirect_uri")).toBe(`${APP}/signed-out`);

  // Back on the app: hosted logout already ended the tokens' authority, and revocation succeeded after it.
  const result = JSON.parse((await page.getByTestId("sign-out-result").textContent()) ?? "null");
  expect(result).toEqual({
    after_logout: { access_token: { active: false }, refresh_token: { active: false }, session_check: { status: 401, ok: false } },
    revoked: true,
  });

  // The hosted cookie is gone: the next sign-in asks for credentials again.
  const cookies = await page.context().cookies(ISSUER);
  expect(cookies.find((c) => c.name === "lk_session")).toBeUndefined();
  await page.goto(`${APP}/start`);
  await expect(page.getByLabel("Password", { exact: true })).toBeVisible();
});

test("hosted logout refuses extra parameters and unregistered destinations on its own page", async ({ page }) => {
  await signIn(page);
  for (const query of [
    `client_id=${CLIENT_ID}&post_logout_redirect_uri=${encodeURIComponent(`${APP}/signed-out`)}&state=abcdefghijklmnopqrstuvwxyz`,
    `client_id=${CLIENT_ID}&post_logout_redirect_uri=${encodeURIComponent(`${APP}/signed-out`)}&id_token_hint=x`,
    `client_id=${CLIENT_ID}&post_logout_redirect_uri=${encodeURIComponent("https://evil.example/")}`,
  ]) {
    const response = await page.goto(`${ISSUER}/oidc/logout?${query}`);
    expect(response?.status()).toBe(400);
    expect(response?.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
    await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/oidc/logout?`));
    await expect(page.getByRole("alert")).toBeVisible();
  }
  // None of that ended the session.
  await page.goto(`${APP}/profile`);
  await expect(page.getByTestId("result")).toBeVisible();
});
