/**
 * The demo application at /demo (lib/demo): the production listener with the demo's binding
 * (server.ts's demoNodeHandler) on http://localhost:<port>, the demo workspace created from
 * lib/workspaces/demo.ts, a browser made of fetch and cookies. Sign-in with the confidential
 * client demo-app, the signed-in page (claims, UserInfo, session check), refresh, revoke, hosted
 * logout, "Security settings" through the account-security backend handoff (and its callback),
 * the error pages, and the start-up upgrade of an older installation's demo workspace.
 */
import { and, eq, isNull } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { openFreshEmbeddedDatabase } from "../setup/test-database";
import { clients, clientSecrets } from "../../db/schema";
import { demoNodeHandler, demoUnavailable } from "../../lib/demo/serve";
import { createService } from "../../lib/service";
import { sha256Hex } from "../../lib/crypto";
import { DEMO_USER, demoAppSecret, demoWorkspace, ensureDemoWorkspace } from "../../lib/workspaces/demo";
import { importWorkspace } from "../../lib/workspaces/file";
import { livePortalSession } from "../../lib/account-security/portal-session";
import { contextFor, resolveWorkspace } from "../../lib/server/router";
import { Browser, startLiveServer, type LiveServer } from "../helpers/guide/live-server";

let live: LiveServer;
let publicUrl: string;

// app/demo's route (what `next dev` serves) gets this file's service.
vi.mock("../../lib/service", async (original) => ({ ...(await original<typeof import("../../lib/service")>()), getService: async () => live.service }));

beforeAll(async () => {
  live = await startLiveServer((service, next) => demoNodeHandler(service, next));
  publicUrl = live.publicUrl;
});
afterAll(() => live.close());

const importOptions = () => ({ clock: live.service.clock, masterKey: live.service.config.masterKey, generateSecrets: true });

async function demoClient(clientId: string) {
  const [row] = await live.service.db
    .select({ id: clients.id, type: clients.type, redirectUris: clients.redirectUris, postLogout: clients.postLogoutRedirectUris, origins: clients.allowedOrigins, scopes: clients.identityScopes, home: clients.homeUri })
    .from(clients)
    .where(and(eq(clients.workspaceId, "demo"), eq(clients.clientId, clientId)));
  return row;
}

/** The demo workspace as this server's start-up leaves it. */
async function freshDemo(): Promise<void> {
  await importWorkspace(live.service.db, demoWorkspace(publicUrl, live.service.config.masterKey), importOptions());
  live.service.cache.clear();
}

/** The hashes of a client's active secrets. */
async function activeSecretHashes(clientPk: string): Promise<string[]> {
  const rows = await live.service.db.select().from(clientSecrets).where(and(eq(clientSecrets.clientPk, clientPk), isNull(clientSecrets.revokedAt)));
  return rows.filter((r) => r.expiresAt.getTime() > live.service.clock.now().getTime()).map((r) => r.secretHash);
}

/** The browser's server-side record (the demo's in-memory store), to check what never reaches the page. */
function storedTokens(browser: Browser): { accessToken: string; refreshToken: string } | undefined {
  const all = (globalThis as Record<symbol, unknown>)[Symbol.for("latchkey.demo-app.browsers")] as Map<string, Map<string, { session?: { signedIn: { accessToken: string; refreshToken: string } } }>>;
  return all.get(`${new URL(publicUrl).origin}/demo`)?.get(browser.jar.get("latchkey_demo")!)?.session?.signedIn;
}

/** From the landing page's link to a signed-in demo page. */
async function signIn(browser: Browser, app: "standard" | "mfa" = "standard"): Promise<{ authorize: URL; callback: URL }> {
  expect((await browser.browse("/demo")).status).toBe(200);
  const start = await browser.browse("/demo/start", { form: { app } });
  expect(start.status).toBe(303);
  const authorize = new URL(start.headers.get("location")!);
  const callback = await browser.signIn(authorize, DEMO_USER);
  expect(callback.origin + callback.pathname).toBe(`${publicUrl}/demo/callback`);
  const back = await browser.browse(callback);
  expect(back.status, await back.clone().text()).toBe(303);
  expect(back.headers.get("location")).toBe("/demo");
  return { authorize, callback };
}

describe("ensureDemoWorkspace on later starts", () => {
  it("adds demo-app and demo-app-mfa to an older installation's demo, keeps their derived secrets active, and follows PUBLIC_URL", async () => {
    // The demo workspace as earlier releases wrote it: the demo signed in with two public clients,
    // and demo-web had addresses the integration guide's code never matched.
    const legacy = (clientId: string) => ({
      client_id: clientId,
      name: clientId,
      type: "PUBLIC" as const,
      redirect_uris: ["http://localhost:5173/callback"],
      post_logout_redirect_uris: ["http://localhost:5173/"],
      allowed_origins: ["http://localhost:5173"],
      identity_scopes: ["openid" as const, "email" as const, "profile" as const],
    });
    const current = demoWorkspace(publicUrl);
    const older = {
      ...current,
      applications: [
        legacy("demo-spa"),
        legacy("demo-spa-mfa"),
        {
          ...current.applications.find((a) => a.client_id === "demo-web")!,
          redirect_uris: ["http://localhost:4000/callback"],
          post_logout_redirect_uris: ["http://localhost:4000/"],
          identity_scopes: ["openid" as const, "email" as const, "profile" as const],
        },
      ],
    };
    await importWorkspace(live.service.db, older, importOptions());
    const options = { clock: live.service.clock, masterKey: live.service.config.masterKey, publicUrl };

    expect(await ensureDemoWorkspace(live.service.db, options)).toEqual({ created: false, added: ["demo-app", "demo-app-mfa"], repointed: ["demo-web"] });
    for (const id of ["demo-app", "demo-app-mfa"]) {
      const row = (await demoClient(id))!;
      expect(row).toMatchObject({ type: "WEB_CONFIDENTIAL", redirectUris: [`${publicUrl}/demo/callback`], postLogout: [`${publicUrl}/demo`], origins: [], scopes: ["openid", "email", "profile"], home: `${publicUrl}/demo` });
      // Only the derived secret's hash is stored.
      expect(await activeSecretHashes(row.id)).toEqual([sha256Hex(demoAppSecret(live.service.config.masterKey, id))]);
    }
    // The earlier public clients stay as they were (no longer used by the demo).
    expect((await demoClient("demo-spa"))!.redirectUris).toEqual(["http://localhost:5173/callback"]);
    expect(await demoClient("demo-web")).toMatchObject({
      redirectUris: ["http://localhost:4000/auth/callback"],
      postLogout: ["http://localhost:4000/signed-out"],
      scopes: ["openid", "email", "profile", "offline_access"],
    });
    // Idempotent: the next start changes nothing.
    expect(await ensureDemoWorkspace(live.service.db, options)).toEqual({ created: false });

    // A revoked derived secret is active again after the next start (nobody else knows it).
    const app = (await demoClient("demo-app"))!;
    await live.service.db.update(clientSecrets).set({ revokedAt: live.service.clock.now() }).where(eq(clientSecrets.clientPk, app.id));
    expect(await activeSecretHashes(app.id)).toEqual([]);
    expect(await ensureDemoWorkspace(live.service.db, options)).toEqual({ created: false });
    expect(await activeSecretHashes(app.id)).toEqual([sha256Hex(demoAppSecret(live.service.config.masterKey, "demo-app"))]);

    // Registered under another PUBLIC_URL's /demo: pointed at this one.
    await live.service.db.update(clients).set({ redirectUris: ["https://old.example/demo/callback"], postLogoutRedirectUris: ["https://old.example/demo"], homeUri: "https://old.example/demo" }).where(eq(clients.id, app.id));
    expect(await ensureDemoWorkspace(live.service.db, options)).toEqual({ created: false, repointed: ["demo-app"] });
    expect(await demoClient("demo-app")).toMatchObject({ redirectUris: [`${publicUrl}/demo/callback`], postLogout: [`${publicUrl}/demo`], home: `${publicUrl}/demo` });
    // A redirect URI someone registered by hand is theirs: not replaced.
    await live.service.db.update(clients).set({ redirectUris: ["https://app.example.test/callback"] }).where(and(eq(clients.workspaceId, "demo"), eq(clients.clientId, "demo-app-mfa")));
    expect(await ensureDemoWorkspace(live.service.db, options)).toEqual({ created: false });
    expect((await demoClient("demo-app-mfa"))!.redirectUris).toEqual(["https://app.example.test/callback"]);
    // So is a demo-web someone changed by hand.
    await live.service.db.update(clients).set({ redirectUris: ["http://localhost:4000/callback", "http://localhost:4000/other"] }).where(and(eq(clients.workspaceId, "demo"), eq(clients.clientId, "demo-web")));
    expect(await ensureDemoWorkspace(live.service.db, options)).toEqual({ created: false });
    await freshDemo();
  });
});

describe("the demo application at /demo", () => {
  beforeAll(freshDemo);

  it("offers sign-in with the demo credentials, in a server-rendered page with its own cookie", async () => {
    const browser = new Browser(publicUrl);
    const home = await browser.browse("/demo");
    expect(home.status).toBe(200);
    expect(home.headers.get("content-type")).toContain("text/html");
    expect(home.headers.get("cache-control")).toBe("no-store");
    expect(home.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const html = await home.text();
    expect(html).toContain(">Sign in</button>");
    expect(html).toContain(">Sign in with MFA required</button>");
    expect(html).toContain(`Sign in as ${DEMO_USER.email} with the password ${DEMO_USER.password}.`);
    expect(html).not.toContain("<script");
    const cookie = home.headers.getSetCookie().find((c) => c.startsWith("latchkey_demo="))!;
    expect(cookie).toMatch(/^latchkey_demo=[A-Za-z0-9_-]{43}; Path=\/demo; HttpOnly; SameSite=Lax; Secure$/);
    expect((await browser.browse("/demo/style.css")).headers.get("content-type")).toContain("text/css");
  });

  it("signs in with demo-app (code, PKCE, state, nonce) and shows the user, the claims, UserInfo and the session check, never the tokens", async () => {
    const browser = new Browser(publicUrl);
    const { authorize, callback } = await signIn(browser);
    expect(authorize.origin + authorize.pathname).toBe(`${publicUrl}/t/demo/oauth2/authorize`);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      client_id: "demo-app",
      redirect_uri: `${publicUrl}/demo/callback`,
      response_type: "code",
      scope: "openid email profile",
      code_challenge_method: "S256",
    });
    for (const name of ["state", "nonce", "code_challenge"]) expect(authorize.searchParams.get(name)).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const page = await browser.browse("/demo");
    const html = await page.text();
    expect(html).toContain("<h1>Signed in as Demo User</h1>");
    expect(html).toContain("<strong>demo@example.com</strong>");
    expect(html).toMatch(/HTTP 200, so <strong class="ok">still valid<\/strong>/);
    expect(html).toContain("&quot;active&quot;: true");
    expect(html).toContain("&quot;aud&quot;: &quot;demo-app&quot;");
    expect(html).toContain("&quot;amr&quot;: [\n    &quot;pwd&quot;\n  ]");
    expect(html).toContain("&quot;email_verified&quot;: true");
    const tokens = storedTokens(browser)!;
    expect(tokens.accessToken.length).toBeGreaterThan(20);
    expect(html).not.toContain(tokens.accessToken);
    expect(html).not.toContain(tokens.refreshToken);
    expect(callback.searchParams.get("code")).not.toBeNull();

    // The callback is consumed once: its replay is a clear page, not a server error.
    const replay = await browser.browse(callback);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain("This browser has no sign-in in progress here");
  });

  it("refreshes (the refresh token rotates), refuses a cross-site post, and signs out through hosted logout", async () => {
    const browser = new Browser(publicUrl);
    await signIn(browser);
    const before = { ...storedTokens(browser)! };

    const refreshed = await browser.browse("/demo/refresh", { form: {} });
    expect(refreshed.status).toBe(303);
    const after = storedTokens(browser)!;
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.accessToken).not.toBe(before.accessToken);
    const html = await (await browser.browse("/demo")).text();
    expect(html).toMatch(/Refreshed: new access token #[0-9a-f]{8} until \d\d:\d\d:\d\d UTC; refresh token rotated #[0-9a-f]{8} → #[0-9a-f]{8}\./);
    expect(html).toContain("refreshed 1 time.");
    expect(html).toContain("still valid");

    // A form posted from another site does nothing.
    const forged = await browser.browse("/demo/revoke", { form: {}, pageOrigin: "https://attacker.example" });
    expect(forged.status).toBe(403);
    // Nor can another site start a sign-in in this browser.
    expect((await browser.browse("/demo/start", { form: { app: "standard" }, pageOrigin: "https://attacker.example" })).status).toBe(403);
    expect(await (await browser.browse("/demo")).text()).toContain("still valid");

    const logout = await browser.browse("/demo/logout", { form: {} });
    expect(logout.status).toBe(303);
    const endSession = new URL(logout.headers.get("location")!);
    expect(endSession.origin + endSession.pathname).toBe(`${publicUrl}/t/demo/oidc/logout`);
    expect(Object.fromEntries(endSession.searchParams)).toEqual({ client_id: "demo-app", post_logout_redirect_uri: `${publicUrl}/demo` });
    const hosted = await browser.browse(endSession);
    expect(hosted.status).toBe(303);
    expect(hosted.headers.get("location")).toBe(`${publicUrl}/demo`);
    const signedOut = await (await browser.browse("/demo")).text();
    expect(signedOut).toContain(">Sign in</button>");
    expect(signedOut).toContain("Latchkey ended the hosted session");
    // The hosted session ended: the next sign-in asks for the password again.
    const start = await browser.browse("/demo/start", { form: { app: "standard" } });
    const authorize = await browser.browse(start.headers.get("location")!);
    expect(new URL(authorize.headers.get("location")!, publicUrl).pathname).toBe("/t/demo/sign-in");
  });

  it("revokes: the session check says so, and the refresh that follows ends the application's session", async () => {
    const browser = new Browser(publicUrl);
    await signIn(browser);
    expect((await browser.browse("/demo/revoke", { form: {} })).status).toBe(303);
    const html = await (await browser.browse("/demo")).text();
    expect(html).toMatch(/HTTP \d+, so <strong class="bad">no longer valid<\/strong>/);
    expect(html).toContain("Revoked the refresh token");
    expect(html).toContain("(revoked)");

    expect((await browser.browse("/demo/refresh", { form: {} })).status).toBe(303);
    const after = await (await browser.browse("/demo")).text();
    expect(after).toMatch(/Refresh refused \(invalid_grant[^)]*\), so the application ended its session/);
    expect(after).toContain(">Sign in</button>");
    expect(storedTokens(browser)).toBeUndefined();
  });

  it("after a revocation, signs out of the application only (hosted logout needs the live grant) and says so", async () => {
    const browser = new Browser(publicUrl);
    await signIn(browser);
    await browser.browse("/demo/revoke", { form: {} });
    const logout = await browser.browse("/demo/logout", { form: {} });
    expect(logout.status).toBe(303);
    expect(logout.headers.get("location")).toBe("/demo");
    const html = await (await browser.browse("/demo")).text();
    expect(html).toContain("hosted logout was skipped: your Latchkey sign-in is still open");
    // It is: the next sign-in skips the password form.
    const start = await browser.browse("/demo/start", { form: { app: "standard" } });
    const authorize = await browser.browse(start.headers.get("location")!);
    expect(new URL(authorize.headers.get("location")!, publicUrl).pathname).toBe("/demo/callback");
  });

  it("opens 'Security settings' through the backend handoff, one click from the sign-in, whose way back is /demo", async () => {
    await live.service.db.update(clients).set({ handoffCallbackUri: null, handoffReturnUri: null }).where(and(eq(clients.workspaceId, "demo"), eq(clients.clientId, "demo-app")));
    const browser = new Browser(publicUrl);
    await signIn(browser);
    const html = await (await browser.browse("/demo")).text();
    expect(html).toContain(`<form method="post" action="/demo/account-security/start"><button type="submit">Security settings</button></form>`);
    expect(html).not.toContain("/auth/account?");
    // Drawing the page registered the handoff's destinations, as a customer server does before its first launch.
    const [saved] = await live.service.db
      .select({ callback: clients.handoffCallbackUri, back: clients.handoffReturnUri, version: clients.handoffVersion })
      .from(clients)
      .where(and(eq(clients.workspaceId, "demo"), eq(clients.clientId, "demo-app")));
    expect(saved).toMatchObject({ callback: `${publicUrl}/demo/account-security/callback`, back: `${publicUrl}/demo` });
    expect(saved!.version).toBeGreaterThan(0);

    // The button's POST: launch, server to server, then the launch URL.
    const start = await browser.browse("/demo/account-security/start", { form: {} });
    expect(start.status).toBe(303);
    const launchUrl = new URL(start.headers.get("location")!);
    expect(launchUrl.origin + launchUrl.pathname).toBe(`${publicUrl}/t/demo/auth/account/handoff`);
    // The browser holds the hosted session behind the demo's token: the portal opens at once.
    const entered = await browser.browse(launchUrl);
    expect(entered.status).toBe(303);
    expect(entered.headers.get("location")).toBe("/t/demo/account");
    const workspace = (await resolveWorkspace(live.service, "demo"))!;
    const portal = await livePortalSession(contextFor(live.service, workspace), browser.jar.header());
    // Opened for the demo's own grant; "Back to Demo application" and "Done": the registered return_uri.
    expect(portal?.grantId).not.toBeNull();
    expect(portal?.client.clientId).toBe("demo-app");
    expect(portal?.returnUri).toBe(`${publicUrl}/demo`);
    expect(await (await browser.browse("/demo")).text()).toContain("started a backend handoff");

    // Another site cannot start one in this browser.
    expect((await browser.browse("/demo/account-security/start", { form: {}, pageOrigin: "https://attacker.example" })).status).toBe(403);
  });

  it("the handoff callback: refuses a wrong state and another browser, takes the pending record once, then approves and opens the portal", async () => {
    const browser = new Browser(publicUrl);
    await signIn(browser);
    await browser.browse("/demo");
    /** A launch, through to the callback URL Latchkey sends the browser to after a step-up (the continuation issues the challenge). */
    const launchToCallback = async (): Promise<URL> => {
      const start = await browser.browse("/demo/account-security/start", { form: {} });
      const handle = new URL(start.headers.get("location")!).searchParams.get("launch")!;
      const resumed = await browser.browse(`/t/demo/auth/account/handoff/continue?launch=${sha256Hex(handle)}`);
      expect(resumed.status).toBe(303);
      const callback = new URL(resumed.headers.get("location")!);
      expect(callback.origin + callback.pathname).toBe(`${publicUrl}/demo/account-security/callback`);
      expect([...callback.searchParams.keys()].sort()).toEqual(["challenge", "intent", "state"]);
      return callback;
    };
    const refused = async (b: Browser, url: URL | string, text: string) => {
      const res = await b.browse(url);
      expect(res.status).toBe(400);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(await res.text()).toContain(text);
    };

    const callback = await launchToCallback();
    const withParam = (name: string, value: string) => {
      const url = new URL(callback);
      url.searchParams.set(name, value);
      return url;
    };
    await refused(browser, withParam("state", "A".repeat(43)), "No security-settings launch of this browser matches");
    await refused(browser, `${callback.href}&extra=1`, "exactly <code>challenge</code>, <code>state</code> and <code>intent</code>");
    // Another browser, even signed in as the same user, holds no pending record of this launch.
    const other = new Browser(publicUrl);
    await signIn(other);
    await refused(other, callback, "No security-settings launch of this browser matches");

    // The browser that started it: approve, then the completion URL opens the portal.
    const approved = await browser.browse(callback);
    expect(approved.status, await approved.clone().text()).toBe(303);
    const completion = new URL(approved.headers.get("location")!);
    expect(completion.origin + completion.pathname).toBe(`${publicUrl}/t/demo/auth/account/complete`);
    const portal = await browser.browse(completion);
    expect(portal.status).toBe(303);
    expect(portal.headers.get("location")).toBe("/t/demo/account");
    // Consumed once: the same callback again finds nothing.
    await refused(browser, callback, "No security-settings launch of this browser matches");

    // A callback whose intent differs is refused, and the record it named is used up all the same.
    const next = await launchToCallback();
    const tampered = new URL(next);
    tampered.searchParams.set("intent", "other");
    await refused(browser, tampered, "does not belong to the sign-in that started the launch");
    await refused(browser, next, "No security-settings launch of this browser matches");
  });

  it("after a revocation, Security settings ends the application's session (REAUTHENTICATION_REQUIRED)", async () => {
    const browser = new Browser(publicUrl);
    await signIn(browser);
    await browser.browse("/demo");
    await browser.browse("/demo/revoke", { form: {} });
    const start = await browser.browse("/demo/account-security/start", { form: {} });
    expect(start.status).toBe(303);
    expect(start.headers.get("location")).toBe("/demo");
    const html = await (await browser.browse("/demo")).text();
    expect(html).toContain("Latchkey answered REAUTHENTICATION_REQUIRED");
    expect(html).toContain(">Sign in</button>");
  });

  it("falls back to the portal's direct link, and says why, when Latchkey refuses the handoff configuration", async () => {
    // The first redirect URI on another origin: the handoff's destinations (on /demo) are refused.
    await live.service.db
      .update(clients)
      .set({ redirectUris: ["https://app.example.test/callback", `${publicUrl}/demo/callback`], handoffCallbackUri: null, handoffReturnUri: null })
      .where(and(eq(clients.workspaceId, "demo"), eq(clients.clientId, "demo-app")));
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const browser = new Browser(publicUrl);
      await signIn(browser);
      const html = await (await browser.browse("/demo")).text();
      expect(html).toContain("The backend handoff is not available: Latchkey refused its handoff configuration (HTTP 400 INVALID_REQUEST)");
      expect(html).toContain(
        `<form method="get" action="${publicUrl}/t/demo/auth/account"><input type="hidden" name="client_id" value="demo-app"><button type="submit">Security settings</button></form>`,
      );
      const entered = await browser.browse(`/t/demo/auth/account?client_id=demo-app`);
      expect(entered.status).toBe(303);
      expect(entered.headers.get("location")).toBe("/t/demo/account");
    } finally {
      errors.mockRestore();
      await freshDemo();
    }
  });

  it("says where the portal is switched on when demo-app does not offer it", async () => {
    await live.service.db.update(clients).set({ accountSecurity: false }).where(and(eq(clients.workspaceId, "demo"), eq(clients.clientId, "demo-app")));
    try {
      const browser = new Browser(publicUrl);
      await signIn(browser);
      const html = await (await browser.browse("/demo")).text();
      expect(html).not.toContain(">Security settings</button>");
      expect(html).toContain("account-security portal is switched off for <code>demo-app</code>");
    } finally {
      await freshDemo();
    }
  });

  it("signs in with demo-app-mfa from the second button", async () => {
    const browser = new Browser(publicUrl);
    await browser.browse("/demo");
    const start = await browser.browse("/demo/start", { form: { app: "mfa" } });
    expect(new URL(start.headers.get("location")!).searchParams.get("client_id")).toBe("demo-app-mfa");
  });

  it("answers a mismatched state, a refused sign-in and unknown paths with clear pages", async () => {
    const browser = new Browser(publicUrl);
    await browser.browse("/demo");
    const start = async () => new URL((await browser.browse("/demo/start", { form: { app: "standard" } })).headers.get("location")!);

    await start();
    const mismatch = await browser.browse(`/demo/callback?code=x&state=${"a".repeat(43)}&iss=${encodeURIComponent(`${publicUrl}/t/demo`)}`);
    expect(mismatch.status).toBe(400);
    expect(await mismatch.text()).toContain("its <code>state</code> differs");

    const { searchParams } = await start();
    const refused = await browser.browse(`/demo/callback?error=access_denied&error_description=${encodeURIComponent("<b>no</b>")}&state=${searchParams.get("state")}`);
    expect(refused.status).toBe(400);
    const text = await refused.text();
    expect(text).toContain("The sign-in was cancelled or refused (<code>access_denied</code>: &lt;b&gt;no&lt;/b&gt;).");
    expect(text).not.toContain("<b>no</b>");

    const missing = await browser.browse("/demo/nothing-here");
    expect(missing.status).toBe(404);
    expect((await browser.browse("/demo/start", { method: "GET" })).status).toBe(404);
  });

  it("says the demo is unavailable when demo-app no longer returns here, and when there is no demo workspace", async () => {
    await live.service.db.update(clients).set({ redirectUris: ["https://app.example.test/callback"] }).where(and(eq(clients.workspaceId, "demo"), eq(clients.clientId, "demo-app")));
    try {
      const browser = new Browser(publicUrl);
      const home = await browser.browse("/demo");
      expect(home.status).toBe(503);
      const html = await home.text();
      expect(html).toContain(`no longer registers ${publicUrl}/demo/callback`);
      expect(html).not.toContain("<button");
      expect((await browser.browse("/demo/start", { form: { app: "standard" } })).status).toBe(503);
    } finally {
      await freshDemo();
    }

    const fresh = await openFreshEmbeddedDatabase();
    try {
      const empty = createService(fresh.db, live.service.config, live.service.clock);
      expect(await demoUnavailable(empty)).toContain("This server has no demo workspace");
      expect(await demoUnavailable(live.service)).toBeNull();
    } finally {
      await fresh.close();
    }
  });
});

describe("app/demo's route (next dev)", () => {
  beforeAll(freshDemo);

  it("answers as the production server's direct path does", async () => {
    const route = await import("../../app/demo/[[...path]]/route");
    const viaNext = await route.GET(new Request(`${publicUrl}/demo`));
    const direct = await new Browser(publicUrl).browse("/demo");
    expect(viaNext.status).toBe(200);
    expect(await viaNext.text()).toBe(await direct.text());
    const cookie = viaNext.headers.getSetCookie()[0]!.split(";")[0]!;
    const start = await route.POST(
      new Request(`${publicUrl}/demo/start`, {
        method: "POST",
        headers: { cookie, origin: publicUrl, "sec-fetch-site": "same-origin", "content-type": "application/x-www-form-urlencoded" },
        body: "app=standard",
      }),
    );
    expect(start.status).toBe(303);
    expect(new URL(start.headers.get("location")!).searchParams.get("redirect_uri")).toBe(`${publicUrl}/demo/callback`);
  });
});
