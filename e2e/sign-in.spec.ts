import { expect, test, type Page } from "@playwright/test";
import { APP, ISSUER } from "./env";

const ADA = { email: "ada@example.com", password: "correct horse battery staple", name: "Ada Lovelace" };

interface Result {
  id_token: { header: { alg: string; kid?: string }; claims: Record<string, unknown> };
  userinfo: Record<string, unknown>;
  session_check: Record<string, unknown>;
}

/** Main-frame URLs the page visits, including every hop of a redirect chain. */
function recordNavigations(page: Page): string[] {
  const urls: string[] = [];
  page.on("request", (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) urls.push(request.url());
  });
  return urls;
}

async function submitCredentials(page: Page, email: string, password: string): Promise<void> {
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/`));
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

async function signIn(page: Page): Promise<Result> {
  await page.goto(`${APP}/start`);
  await submitCredentials(page, ADA.email, ADA.password);
  await page.waitForURL(`${APP}/profile`);
  return readResult(page);
}

async function readResult(page: Page): Promise<Result> {
  return JSON.parse((await page.getByTestId("result").textContent()) ?? "null") as Result;
}

test("signs in on the hosted page and returns verified identity to the customer app", async ({ page, request }) => {
  const navigations = recordNavigations(page);
  const before = Math.floor(Date.now() / 1000);
  const result = await signIn(page);
  const { claims, header } = result.id_token;

  // The callback carried exactly one code, state and iss (RFC 9207), iss being the issuer.
  const callback = navigations.map((u) => new URL(u)).find((u) => u.href.startsWith(`${APP}/callback`));
  expect(callback, "the browser came back through /callback").toBeDefined();
  for (const name of ["code", "state", "iss"]) expect(callback!.searchParams.getAll(name)).toHaveLength(1);
  expect(callback!.searchParams.get("iss")).toBe(ISSUER);

  // ID token: openid-client verified signature (JWKS), iss, aud, exp, iat and nonce.
  expect(header.alg).toBe("ES256");
  const jwks = (await (await request.get(`${ISSUER}/.well-known/jwks.json`)).json()) as { keys: { kid?: string }[] };
  expect(jwks.keys.map((key) => key.kid)).toContain(header.kid);
  expect(claims.iss).toBe(ISSUER);
  expect([claims.aud].flat()).toEqual(["e2e-web"]);
  expect(typeof claims.nonce).toBe("string");
  expect(claims.sub).toEqual(expect.any(String));
  expect(claims.email).toBe(ADA.email);
  expect(claims.email_verified).toBe(true);
  expect(claims.name).toBe(ADA.name);
  expect(claims.sid).toEqual(expect.any(String));
  expect(claims.auth_time).toEqual(expect.any(Number));
  expect(claims.auth_time as number).toBeGreaterThanOrEqual(before - 5);
  expect(claims.amr).toEqual(expect.arrayContaining([expect.any(String)]));
  expect((claims.exp as number) - (claims.iat as number)).toBeLessThanOrEqual(300);

  // UserInfo speaks for the same subject.
  expect(result.userinfo.sub).toBe(claims.sub);
  expect(result.userinfo.email).toBe(ADA.email);
  expect(result.userinfo.email_verified).toBe(true);
  expect(result.userinfo.name).toBe(ADA.name);

  // The online session check confirms current authority.
  expect(result.session_check).toMatchObject({ active: true, iss: ISSUER, client_id: "e2e-web", sub: claims.sub });
  expect(result.session_check.exp as number).toBeGreaterThan(Date.now() / 1000);
});

test("a wrong password shows an error on the hosted page and goes nowhere", async ({ page }) => {
  const navigations = recordNavigations(page);
  await page.goto(`${APP}/start`);
  await submitCredentials(page, ADA.email, "not the password");

  await expect(page.getByRole("alert").filter({ hasText: /email or password/i })).toBeVisible();
  await expect(page).toHaveURL((url) => url.href.startsWith(`${ISSUER}/`));
  await expect(page.getByLabel("Password", { exact: true })).toBeVisible();
  expect(navigations.filter((u) => u.startsWith(APP))).toEqual([`${APP}/start`]);
});

test("a live hosted session skips the sign-in form", async ({ page }) => {
  const first = await signIn(page);

  const hosted: { url: string; status: number }[] = [];
  page.on("response", (response) => {
    const request = response.request();
    if (request.isNavigationRequest() && response.url().startsWith(`${ISSUER}/`)) {
      hosted.push({ url: response.url(), status: response.status() });
    }
  });
  await page.goto(`${APP}/start`);
  await page.waitForURL(`${APP}/profile`);
  const second = await readResult(page);

  // Straight through authorize to the callback: Latchkey answered only with redirects.
  expect(hosted.length).toBeGreaterThan(0);
  for (const { url, status } of hosted) expect(status, url).toBeGreaterThanOrEqual(300);
  for (const { url, status } of hosted) expect(status, url).toBeLessThan(400);
  // Same hosted session, fresh transaction.
  expect(second.id_token.claims.sid).toBe(first.id_token.claims.sid);
  expect(second.id_token.claims.auth_time).toBe(first.id_token.claims.auth_time);
  expect(second.id_token.claims.sub).toBe(first.id_token.claims.sub);
  expect(second.id_token.claims.nonce).not.toBe(first.id_token.claims.nonce);
  expect(second.session_check.active).toBe(true);
});

test("hosted logout ends the hosted session and returns to the registered destination", async ({ page }) => {
  await signIn(page);
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(`${APP}/signed-out`);

  // The next sign-in asks for credentials again.
  await page.goto(`${APP}/start`);
  await expect(page.getByLabel("Password", { exact: true })).toBeVisible();
});
