/**
 * Application sessions and security alerts in the portal: each application holding an active
 * grant for the user, with its last use, address and device; "sign out of this application"
 * revoking that grant and its tokens (the session check answers inactive, the refresh fails),
 * audited, never another user's; and a refresh-token reuse shown to the user as an alert.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { auditEvents, grants, hostedSessions } from "../../../db/schema";
import { livePortalSession } from "../../../lib/account-security/portal-session";
import { portalCsrf } from "../../../lib/account-security/portal-view";
import { deviceWords, listApplicationSessions } from "../../../lib/account-security/applications";
import { translator } from "../../../lib/i18n/translate";
import { deviceLabel, parseUserAgent } from "../../../lib/user-agent";
import { listSecurityAlerts, ALERTS_SHOWN_FOR_MS } from "../../../lib/account-security/alerts";
import { loadManageView } from "../../../lib/account-security/manage-view";
import { CLIENT_ADDRESS_HEADER } from "../../../lib/http/client-address";
import { SECOND } from "../../../lib/clock";
import { call, createHarness, exchangeCode, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { SPA, WEB, standardWorkspace } from "../../helpers/fixtures";
import { outcome, postPassword, startSignIn, userIdOf, viewOf, workspaceContext, type PendingSignIn } from "../../helpers/factors/sign-in";

let h: Harness;
const ws = uniqueWorkspaceId("portal-apps");
const PASSWORD = "a long enough password for tests";
let userCount = 0;
const nextUser = () => `apps${userCount++}@example.test`;

const CHROME_MAC = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

beforeAll(async () => {
  h = await createHarness();
  const doc = standardWorkspace(ws) as ReturnType<typeof standardWorkspace> & { users: object[] };
  for (const app of doc.applications) if (app.client_id === WEB.client_id) app.account_security = true;
  for (let i = 0; i < 20; i++) doc.users.push({ email: `apps${i}@example.test`, password: PASSWORD, email_verified: true });
  await seed(h, doc);
});

/** The user signs in to the SPA from a browser (its address and user agent), and the SPA takes its tokens. */
async function signInToSpa(email: string, browser: { ip: string; userAgent: string } = { ip: "198.51.100.7", userAgent: CHROME_MAC }) {
  const s = await startSignIn(h, ws, { ...SPA, scope: "openid email" });
  const res = await call(h, `/t/${ws}/sign-in/password`, {
    form: { tx: s.tx, csrf: (await viewOf(h, s)).csrf, email, password: PASSWORD },
    cookie: s.jar.header(),
    headers: { origin: PUBLIC_URL, "user-agent": browser.userAgent, [CLIENT_ADDRESS_HEADER]: browser.ip },
  });
  s.jar.take(res);
  const o = outcome(res);
  if (o.to !== "callback") throw new Error(`sign-in stopped at ${o.error}`);
  const tokens = await (await exchangeCode(h, ws, { code: o.code, redirect_uri: SPA.redirect_uri, verifier: s.verifier, client_id: SPA.client_id })).json();
  return { jar: s.jar, accessToken: tokens.access_token as string, refreshToken: tokens.refresh_token as string };
}

const refresh = (rt: string, headers: Record<string, string> = {}) =>
  call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: rt, client_id: SPA.client_id }, headers });
const sessionCheck = (at: string) => call(h, `/t/${ws}/oidc/session`, { headers: { authorization: `Bearer ${at}` } });

/** The portal by the direct link, in a browser of its own (password sign-in). */
async function openPortal(email: string) {
  const jar = new Jar();
  const link = `/t/${ws}/auth/account?client_id=${WEB.client_id}`;
  const first = await call(h, link);
  jar.take(first);
  const tx = new URL(first.headers.get("location")!, PUBLIC_URL).searchParams.get("tx")!;
  const s: PendingSignIn = { workspaceId: ws, tx, jar, verifier: "", state: "", nonce: "", client: { client_id: WEB.client_id, redirect_uri: WEB.redirect_uri } };
  expect((await postPassword(h, s, email, PASSWORD)).status).toBe(303);
  jar.take(await call(h, link, { cookie: jar.header() }));
  return jar;
}

async function post(jar: Jar, path: string, fields: Record<string, string>) {
  const ctx = await workspaceContext(h, ws);
  const portal = (await livePortalSession(ctx, jar.header()))!;
  const res = await call(h, `/t/${ws}/account${path}`, { form: { csrf: portalCsrf(ctx, portal), ...fields }, cookie: jar.header(), headers: { origin: PUBLIC_URL } });
  expect(res.status).toBe(303);
  const url = new URL(res.headers.get("location")!, PUBLIC_URL);
  return { done: url.searchParams.get("done"), error: url.searchParams.get("error") };
}

describe("application sessions", () => {
  it("lists each application with an active grant: name, last use, address and device", async () => {
    const email = nextUser();
    await signInToSpa(email);
    const ctx = await workspaceContext(h, ws);
    const userId = await userIdOf(h, ws, email);
    const list = await listApplicationSessions(ctx, userId);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ clientId: SPA.client_id, address: "198.51.100.7", device: { label: "Chrome 131 on macOS" }, current: false });
    expect(list[0].lastUsedAt.getTime()).toBe(h.clock.now().getTime());
  });

  it("moves the last use with a refresh, and drops a grant whose hosted session ended", async () => {
    const email = nextUser();
    const t = await signInToSpa(email);
    const userId = await userIdOf(h, ws, email);
    const ctx = await workspaceContext(h, ws);
    h.clock.advance(60 * SECOND);
    expect((await refresh(t.refreshToken)).status).toBe(200);
    expect((await listApplicationSessions(ctx, userId))[0].lastUsedAt.getTime()).toBe(h.clock.now().getTime());
    await h.service.db.update(hostedSessions).set({ endedAt: h.clock.now() }).where(and(eq(hostedSessions.workspaceId, ws), eq(hostedSessions.userId, userId)));
    expect(await listApplicationSessions(ctx, userId)).toEqual([]);
  });

  it("signs out of one application: its session check answers inactive, its refresh fails; audited", async () => {
    const email = nextUser();
    const t = await signInToSpa(email);
    expect((await sessionCheck(t.accessToken)).status).toBe(200);
    const jar = await openPortal(email);
    const ctx = await workspaceContext(h, ws);
    const portal = (await livePortalSession(ctx, jar.header()))!;
    const [app] = (await loadManageView(ctx, portal, jar.header())).applications;
    expect(app.clientId).toBe(SPA.client_id);

    expect((await post(jar, "/applications/sign-out", { grant: app.grantId })).done).toBe("application_signed_out");
    const check = await sessionCheck(t.accessToken);
    expect(check.status === 401 || (check.status === 200 && (await check.json()).active === false)).toBe(true);
    const r = await refresh(t.refreshToken);
    expect(r.status).toBe(400);
    expect((await r.json()).error).toBe("invalid_grant");
    const [grant] = await h.service.db.select().from(grants).where(eq(grants.id, app.grantId));
    expect(grant.revokeReason).toBe("account_security_portal");
    const userId = await userIdOf(h, ws, email);
    const [event] = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "account_security.application_signed_out"), eq(auditEvents.subject, userId)));
    expect(event).toMatchObject({ clientId: SPA.client_id, actor: userId, data: expect.objectContaining({ grant_id: app.grantId }) });
    expect(await listApplicationSessions(ctx, userId)).toEqual([]);
    // Already signed out: nothing more to do.
    expect((await post(jar, "/applications/sign-out", { grant: app.grantId })).error).toBe("portal_application_not_found");
  });

  it("refuses another user's grant, which stays live", async () => {
    const victim = nextUser();
    const t = await signInToSpa(victim);
    const [victimGrant] = await listApplicationSessions(await workspaceContext(h, ws), await userIdOf(h, ws, victim));
    const jar = await openPortal(nextUser());
    expect((await post(jar, "/applications/sign-out", { grant: victimGrant.grantId })).error).toBe("portal_application_not_found");
    expect((await sessionCheck(t.accessToken)).status).toBe(200);
    expect((await refresh(t.refreshToken)).status).toBe(200);
  });

  it("names devices as the console does (lib/user-agent.ts, one parser), in the page's language", () => {
    const portal = (ua: string, locale: "en" | "de" | "fr" = "en") => deviceLabel(parseUserAgent(ua), deviceWords(translator(locale)));
    const cases: Array<[string, string]> = [
      [CHROME_MAC, "Chrome 131 on macOS"],
      ["Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1", "Safari 17 on iOS"],
      ["Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox 133 on Windows"],
      ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", "Edge 131 on Windows"],
      // Headless Chrome: once "Unknown browser on Linux" in the console and "Safari on Linux" here.
      ["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.6778.33 Safari/537.36", "Chrome 131 on Linux"],
      ["SomeBot/1.0 (Linux)", "Unknown browser on Linux"],
      ["curl/8.0", "Unknown device"],
    ];
    for (const [ua, name] of cases) {
      expect(portal(ua)).toBe(name);
      expect(parseUserAgent(ua).label).toBe(name);
    }
    expect(portal(cases[4]![0], "de")).toBe("Chrome 131 unter Linux");
    expect(portal("curl/8.0", "fr")).toBe("Appareil inconnu");
  });
});

describe("security alerts", () => {
  it("shows a refresh-token reuse to the user: which application, when, from which address", async () => {
    const email = nextUser();
    const t = await signInToSpa(email);
    expect((await refresh(t.refreshToken)).status).toBe(200);
    h.clock.advance(5 * SECOND);
    const reuse = await refresh(t.refreshToken, { [CLIENT_ADDRESS_HEADER]: "203.0.113.66" });
    expect(reuse.status).toBe(400);
    const userId = await userIdOf(h, ws, email);
    const ctx = await workspaceContext(h, ws);
    const alerts = await listSecurityAlerts(ctx, userId);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ clientId: SPA.client_id, applicationName: expect.any(String), address: "203.0.113.66" });
    expect(alerts[0].at.getTime()).toBe(h.clock.now().getTime());
    // The portal page's data has it; the administrator's audit log has the same flagged event.
    const jar = await openPortal(email);
    const portal = (await livePortalSession(ctx, jar.header()))!;
    expect((await loadManageView(ctx, portal, jar.header())).alerts.map((a) => a.id)).toEqual([alerts[0].id]);
    const [event] = await h.service.db.select().from(auditEvents).where(eq(auditEvents.id, alerts[0].id));
    expect(event).toMatchObject({ type: "refresh.reuse_detected", flagged: "possible_token_theft", ip: "203.0.113.66" });
  });

  it("shows no other user's alerts, and none older than 90 days", async () => {
    const email = nextUser();
    const t = await signInToSpa(email);
    await refresh(t.refreshToken);
    await refresh(t.refreshToken);
    const other = nextUser();
    await signInToSpa(other);
    const ctx = await workspaceContext(h, ws);
    expect(await listSecurityAlerts(ctx, await userIdOf(h, ws, other))).toEqual([]);
    expect(await listSecurityAlerts(ctx, await userIdOf(h, ws, email))).toHaveLength(1);
    h.clock.advance(ALERTS_SHOWN_FOR_MS);
    expect(await listSecurityAlerts(ctx, await userIdOf(h, ws, email))).toEqual([]);
  });
});
