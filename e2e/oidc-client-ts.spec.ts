/**
 * A single-page app signs in with oidc-client-ts, running in Chromium on a page at a registered
 * origin (e2e/spa, public client `e2e-browser` allowing http://localhost:3113). Every call the
 * library and the page make to Latchkey is a cross-origin call from that page: discovery, JWKS,
 * the code exchange, UserInfo, the session check, refresh and revocation; the sign-in and hosted
 * logout are navigations. The page runs e2e/spa/latchkey-spa.js, the module docs/integration.md
 * shows; the first test keeps the two identical.
 */
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { ISSUER, SPA, SPA_PORT } from "./env";
import { startSpaServer, stopSpaServer } from "./spa/server";

const CLIENT_ID = "e2e-browser";
const ADA = { email: "ada@example.com", password: "correct horse battery staple", name: "Ada Lovelace" };

let spa: Server;
test.beforeAll(async () => {
  spa = await startSpaServer({ port: SPA_PORT, issuer: ISSUER, clientId: CLIENT_ID });
});
test.afterAll(async () => {
  if (spa) await stopSpaServer(spa);
});

test("docs/integration.md shows the module the example single-page app runs", () => {
  const doc = readFileSync(path.join(process.cwd(), "docs/integration.md"), "utf8");
  const code = readFileSync(path.join(process.cwd(), "e2e/spa/latchkey-spa.js"), "utf8");
  expect(doc).toContain("```js\n" + code + "```\n");
});

type Json = Record<string, any>;

interface Call {
  method: string;
  /** The path under the issuer. */
  path: string;
  status: number;
  origin: string | undefined;
  body: URLSearchParams | null;
}

interface Traffic {
  /** Main-frame navigations, every hop of a redirect chain included. */
  navigations: URL[];
  /** The page's own calls to Latchkey (fetches, not navigations or preflights), as answered. */
  calls: Call[];
  /** What the browser reported on the console: answers blocked by CORS show up here. */
  console: string[];
  /** Request headers still being read. */
  pending: Promise<void>[];
}

function watch(page: Page): Traffic {
  const traffic: Traffic = { navigations: [], calls: [], console: [], pending: [] };
  const issuerPath = new URL(ISSUER).pathname;
  page.on("request", (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) traffic.navigations.push(new URL(request.url()));
  });
  page.on("response", (response) => {
    const request = response.request();
    if (request.isNavigationRequest() || !request.url().startsWith(`${ISSUER}/`) || request.method() === "OPTIONS") return;
    const call: Call = {
      method: request.method(),
      path: new URL(request.url()).pathname.slice(issuerPath.length),
      status: response.status(),
      origin: undefined,
      body: request.method() === "POST" ? new URLSearchParams(request.postData() ?? "") : null,
    };
    traffic.calls.push(call);
    traffic.pending.push(request.headerValue("origin").then((origin) => void (call.origin = origin ?? undefined)));
  });
  page.on("console", (message) => {
    if (message.type() === "error") traffic.console.push(message.text());
  });
  return traffic;
}

/** The page's result, after checking that its last action did not fail (the failure names its cause). */
async function result(page: Page, traffic: Traffic): Promise<Json> {
  const error = (await page.getByTestId("error").textContent()) ?? "";
  expect(error, `the page reported an error; browser console:\n${traffic.console.join("\n")}`).toBe("");
  return JSON.parse((await page.getByTestId("result").textContent()) || "null") as Json;
}

/** Waits until the page shows an error or `done` holds (a status line, or a key in the result). */
async function outcome(page: Page, traffic: Traffic, done: { status: string } | { key: string }): Promise<Json> {
  try {
    await page.waitForFunction(
      (done) => {
        const text = (id: string) => document.getElementById(id)?.textContent ?? "";
        if (text("error")) return true;
        return "status" in done ? text("status") === done.status : text("result").includes(`"${done.key}"`);
      },
      done,
      { timeout: 15_000 },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\nbrowser console:\n${traffic.console.join("\n")}`);
  }
  return result(page, traffic);
}

/**
 * After an action that navigates: waits until the browser went to `prefix` (since navigation
 * number `from`) and is still on that origin, or fails with the page's error.
 */
async function navigatesTo(page: Page, traffic: Traffic, prefix: string, from: number): Promise<void> {
  const arrived = () => traffic.navigations.slice(from).some((u) => u.href.startsWith(prefix)) && page.url().startsWith(new URL(prefix).origin);
  const pageError = () => page.evaluate(() => document.getElementById("error")?.textContent ?? "").catch(() => "");
  await expect.poll(async () => arrived() || (await pageError()) !== "", { message: `waiting for ${prefix}` }).toBe(true);
  if (!arrived()) await result(page, traffic);
  await page.waitForLoadState();
}

const described = (call: Call) => `${call.method} ${call.path} ${call.status}`;

/** The page's calls to Latchkey since `from`, once they include `expected` (events may trail the page). */
async function callsSince(traffic: Traffic, from: number, expected: string[]): Promise<Call[]> {
  await expect.poll(() => traffic.calls.slice(from).map(described), { message: "the page's calls to Latchkey" }).toEqual(expect.arrayContaining(expected));
  await Promise.all(traffic.pending);
  return traffic.calls.slice(from);
}

function paramNames(url: URL): string[] {
  return [...url.searchParams.keys()].sort();
}

function tokensOf(page: Page): Promise<{ access_token: string; refresh_token: string | null; sub: string } | null> {
  return page.evaluate(async () => {
    const user = await (window as any).latchkey.userManager.getUser();
    return user ? { access_token: user.access_token, refresh_token: user.refresh_token ?? null, sub: user.profile.sub } : null;
  });
}

/** Status of UserInfo and the session check for `accessToken`, asked from the page's origin. */
function probeFromPage(page: Page, accessToken: string): Promise<{ userinfo: number | string; session: number | string }> {
  return page.evaluate(
    async ({ issuer, accessToken }) => {
      const status = (url: string) =>
        fetch(url, { headers: { Authorization: `Bearer ${accessToken}` }, cache: "no-store" }).then(
          (response) => response.status,
          (error: Error) => `${error.name}: ${error.message}`,
        );
      return { userinfo: await status(`${issuer}/oidc/userinfo`), session: await status(`${issuer}/oidc/session`) };
    },
    { issuer: ISSUER, accessToken },
  );
}

test("oidc-client-ts on a registered origin: sign-in, UserInfo, session check, refresh, revocation, hosted logout", async ({ page }) => {
  const traffic = watch(page);
  const signedIn = { status: `Signed in as ${ADA.email}` };
  const signedOut = { status: "Signed out" };
  let sub = "";
  let grantedScope = "";

  await test.step("sign-in through the hosted page, with the nonce Latchkey requires", async () => {
    await page.goto(SPA);
    await outcome(page, traffic, signedOut);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    // Discovery ran from the page (cross-origin); the library then navigated to authorize.
    await navigatesTo(page, traffic, `${ISSUER}/oauth2/authorize`, 0);
    await page.getByLabel("Email", { exact: true }).fill(ADA.email);
    await page.getByLabel("Password", { exact: true }).fill(ADA.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await navigatesTo(page, traffic, `${SPA}/callback`, 0);
    const signIn = await outcome(page, traffic, signedIn);
    await expect(page).toHaveURL(`${SPA}/`);

    const authorize = traffic.navigations.find((u) => u.href.startsWith(`${ISSUER}/oauth2/authorize`))!;
    expect(paramNames(authorize)).toEqual(["client_id", "code_challenge", "code_challenge_method", "nonce", "redirect_uri", "response_type", "scope", "state"]);
    expect(authorize.searchParams.get("client_id")).toBe(CLIENT_ID);
    expect(authorize.searchParams.get("redirect_uri")).toBe(`${SPA}/callback`);
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("nonce")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const callback = traffic.navigations.find((u) => u.href.startsWith(`${SPA}/callback`))!;
    expect(paramNames(callback)).toEqual(["code", "iss", "state"]);
    expect(callback.searchParams.get("iss")).toBe(ISSUER);

    // The page's calls, each from the app's origin and answered: discovery (this client's), the
    // code exchange as a public client, UserInfo, JWKS (the page verified the ID token) and the
    // session check.
    const expected = [
      "GET /.well-known/openid-configuration 200",
      "POST /oauth2/token 200",
      "GET /oidc/userinfo 200",
      "GET /.well-known/jwks.json 200",
      "GET /oidc/session 200",
    ];
    const calls = await callsSince(traffic, 0, expected);
    // (Discovery and JWKS may come from the browser's cache the second time; they are public anyway.)
    for (const call of calls.filter((c) => !c.path.startsWith("/.well-known/"))) expect(call.origin, `${call.method} ${call.path}`).toBe(SPA);
    const exchange = calls.find((c) => c.path === "/oauth2/token")!.body!;
    expect([...exchange.keys()].sort()).toEqual(["client_id", "code", "code_verifier", "grant_type", "redirect_uri"]);

    // UserInfo's claims (the library required its sub to equal the ID token's) and the session check.
    sub = signIn.profile.sub;
    grantedScope = signIn.scope;
    expect(sub).toEqual(expect.any(String));
    expect(grantedScope.split(" ").sort()).toEqual(["email", "openid", "profile"]);
    expect(signIn.profile).toMatchObject({ iss: ISSUER, aud: CLIENT_ID, email: ADA.email, email_verified: true, name: ADA.name });
    expect(signIn.session_check).toMatchObject({ ok: true, status: 200, body: { active: true, iss: ISSUER, client_id: CLIENT_ID, sub } });
  });

  await test.step("the session check from the page", async () => {
    await page.getByRole("button", { name: "Check session" }).click();
    const checked = await outcome(page, traffic, { key: "session_check" });
    expect(checked.session_check).toMatchObject({ ok: true, status: 200, body: { active: true, sub } });
  });

  await test.step("refresh with the refresh token (signinSilent)", async () => {
    const before = (await tokensOf(page))!;
    const from = traffic.calls.length;
    await page.getByRole("button", { name: "Refresh" }).click();
    const refreshed = await outcome(page, traffic, { key: "refreshed" });
    expect(refreshed).toMatchObject({ refreshed: true, access_token_changed: true, refresh_token_changed: true, same_subject: true });
    expect(refreshed.session_check).toMatchObject({ ok: true, status: 200, body: { active: true, sub } });
    const calls = await callsSince(traffic, from, ["POST /oauth2/token 200"]);
    const request = calls.find((c) => c.path === "/oauth2/token")!;
    expect(request.status).toBe(200);
    expect(Object.fromEntries(request.body!)).toEqual({ grant_type: "refresh_token", refresh_token: before.refresh_token, scope: grantedScope, client_id: CLIENT_ID });
  });

  await test.step("revocation (revokeTokens) ends the grant: UserInfo and the session check answer 401 to the page", async () => {
    const from = traffic.calls.length;
    await page.getByRole("button", { name: "Revoke" }).click();
    const revoked = await outcome(page, traffic, { key: "revoked" });
    expect(revoked).toMatchObject({ revoked: true, userinfo_status: 401, session_check: { ok: false, status: 401 } });
    await callsSince(traffic, from, ["POST /oauth2/revoke 200"]);
    await expect.poll(() => traffic.calls.slice(from).filter((c) => c.path === "/oauth2/revoke").length).toBe(2);
    const calls = traffic.calls.slice(from);
    const revocations = calls.filter((c) => c.path === "/oauth2/revoke");
    expect(revocations.map((c) => [c.status, c.body!.get("token_type_hint"), c.body!.get("client_id")])).toEqual([
      [200, "access_token", CLIENT_ID],
      [200, "refresh_token", CLIENT_ID],
    ]);
  });

  await test.step("hosted logout after revocation ends nothing (it needs the grant that revocation ended), and links back", async () => {
    const from = traffic.navigations.length;
    await page.getByRole("button", { name: "Sign out" }).click();
    await navigatesTo(page, traffic, `${ISSUER}/oidc/logout`, from);
    const logout = traffic.navigations.slice(from).find((u) => u.href.startsWith(`${ISSUER}/oidc/logout`))!;
    expect(paramNames(logout)).toEqual(["client_id", "post_logout_redirect_uri"]);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("You are signed out of E2E browser app");
    await expect(page.getByRole("link", { name: "Continue to E2E browser app" })).toHaveAttribute("href", `${SPA}/signed-out`);
  });

  await test.step("signing in again skips the form: the hosted session is still alive", async () => {
    const from = traffic.navigations.length;
    await page.goto(SPA);
    await outcome(page, traffic, signedOut);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await navigatesTo(page, traffic, `${SPA}/callback`, from);
    const again = await outcome(page, traffic, signedIn);
    expect(traffic.navigations.slice(from).filter((u) => u.pathname.endsWith("/sign-in"))).toEqual([]);
    expect(again.profile.sub).toBe(sub);
    expect(again.session_check).toMatchObject({ ok: true, status: 200 });
  });

  await test.step("hosted logout with exactly client_id and post_logout_redirect_uri ends the grant", async () => {
    const tokens = (await tokensOf(page))!;
    const calls = traffic.calls.length;
    const from = traffic.navigations.length;
    await page.getByRole("button", { name: "Sign out" }).click();
    await navigatesTo(page, traffic, `${SPA}/signed-out`, from);
    expect(await outcome(page, traffic, { key: "signed_out" })).toEqual({ signed_out: true });
    await expect(page.getByTestId("status")).toHaveText(signedOut.status);

    const logout = traffic.navigations.slice(from).find((u) => u.href.startsWith(`${ISSUER}/oidc/logout`))!;
    expect(paramNames(logout)).toEqual(["client_id", "post_logout_redirect_uri"]);
    expect(Object.fromEntries(logout.searchParams)).toEqual({ client_id: CLIENT_ID, post_logout_redirect_uri: `${SPA}/signed-out` });
    expect(traffic.navigations.slice(from).map((u) => u.href)).toContain(`${SPA}/signed-out`);
    // Nothing was revoked: the logout alone ended the grant.
    expect(traffic.calls.slice(calls).filter((c) => c.path === "/oauth2/revoke")).toEqual([]);

    // The app's last access token is refused, with a status the page can read, and its refresh token too.
    expect(await probeFromPage(page, tokens.access_token)).toEqual({ userinfo: 401, session: 401 });
    const refresh = await fetch(`${ISSUER}/oauth2/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: tokens.refresh_token!, client_id: CLIENT_ID }),
    });
    expect([refresh.status, ((await refresh.json()) as { error: string }).error]).toEqual([400, "invalid_grant"]);
  });

  await test.step("the hosted session has ended: signing in asks for credentials again", async () => {
    const from = traffic.navigations.length;
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await navigatesTo(page, traffic, `${ISSUER}/`, from);
    await expect(page.getByLabel("Password", { exact: true })).toBeVisible();
  });
});
