/**
 * The portal session and the direct link: availability, the direct link's reuse or sign-in, the
 * 30-minute bound, the binding to the hosted session cookie, and the end of the portal with each
 * link of its source authority (session, grant, user, client, the application's switch).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { authorizationCodes, clients, grants, users } from "../../../db/schema";
import { endHostedSession, readSessionCookie } from "../../../lib/authn/hosted-session";
import { livePortalSession, openPortalSession, PORTAL_SESSION_MS } from "../../../lib/account-security/portal-session";
import { loadPortalView } from "../../../lib/account-security/portal-view";
import { revokeGrantAndTokens } from "../../../lib/oauth/revoke";
import { MINUTE, SECOND } from "../../../lib/clock";
import { call, createHarness, exchangeCode, Jar, PUBLIC_URL, seed, signIn, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { ADA, BOB, M2M, SPA, WEB, standardWorkspace } from "../../helpers/fixtures";
import { postPassword, workspaceContext, type PendingSignIn } from "../../helpers/factors/sign-in";

let h: Harness;
const ws = uniqueWorkspaceId("portal");

beforeAll(async () => {
  h = await createHarness();
  const doc = standardWorkspace(ws);
  for (const app of doc.applications) if (app.client_id === WEB.client_id) app.account_security = true;
  await seed(h, doc);
});

const link = (clientId: string) => `/t/${ws}/auth/account?client_id=${encodeURIComponent(clientId)}`;

/** The direct link as a browser follows it: the sign-in when it asks for one (password), then the portal. */
async function directLink(jar = new Jar(), who: { email: string; password: string } = ADA): Promise<{ jar: Jar; signedIn: boolean; location: string }> {
  let res = await call(h, link(WEB.client_id), { cookie: jar.header() });
  expect(res.status).toBe(303);
  jar.take(res);
  let location = new URL(res.headers.get("location")!, PUBLIC_URL);
  let signedIn = false;
  if (location.pathname === `/t/${ws}/sign-in`) {
    const s: PendingSignIn = { workspaceId: ws, tx: location.searchParams.get("tx")!, jar, verifier: "", state: "", nonce: "", client: { client_id: WEB.client_id, redirect_uri: WEB.redirect_uri } };
    const done = await postPassword(h, s, who.email, who.password);
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe(link(WEB.client_id));
    res = await call(h, link(WEB.client_id), { cookie: jar.header() });
    expect(res.status).toBe(303);
    jar.take(res);
    location = new URL(res.headers.get("location")!, PUBLIC_URL);
    signedIn = true;
  }
  return { jar, signedIn, location: location.pathname };
}

async function live(jar: Jar | string) {
  return livePortalSession(await workspaceContext(h, ws), typeof jar === "string" ? jar : jar.header());
}

async function setClient(clientId: string, values: Partial<typeof clients.$inferInsert>) {
  await h.service.db.update(clients).set(values).where(and(eq(clients.workspaceId, ws), eq(clients.clientId, clientId)));
  h.service.cache.clear();
}

describe("availability", () => {
  it("answers the hosted 'not available' page when the application does not offer the portal", async () => {
    for (const clientId of [SPA.client_id, M2M.client_id]) {
      const res = await call(h, link(clientId));
      expect(res.status).toBe(404);
      const body = await res.text();
      expect(body).toContain("not_available");
      expect(res.headers.getSetCookie()).toEqual([]);
    }
  });

  it("answers an unknown or missing application as the sign-in does", async () => {
    expect((await call(h, link("nope"))).status).toBe(404);
    expect((await call(h, `/t/${ws}/auth/account`)).status).toBe(400);
    expect((await call(h, `${link(WEB.client_id)}&client_id=${WEB.client_id}`)).status).toBe(400);
  });
});

describe("the direct link", () => {
  it("asks for the hosted sign-in without a session, comes back, and opens the portal without any code, grant or login", async () => {
    const { jar, signedIn, location } = await directLink();
    expect(signedIn).toBe(true);
    expect(location).toBe(`/t/${ws}/account`);
    const portal = await live(jar);
    expect(portal).not.toBeNull();
    expect(portal!.grantId).toBeNull();
    expect(portal!.returnUri).toBe("https://web.example.test/");
    expect(await h.service.db.select().from(grants).where(eq(grants.workspaceId, ws))).toEqual([]);
    expect(await h.service.db.select().from(authorizationCodes).where(eq(authorizationCodes.workspaceId, ws))).toEqual([]);
  });

  it("goes back to the application's registered home page when it has one (the portal's link and 'Done'), else to its origin", async () => {
    await setClient(WEB.client_id, { homeUri: "https://web.example.test/dashboard?tab=home" });
    try {
      const { jar } = await directLink();
      const portal = (await live(jar))!;
      expect(portal.returnUri).toBe("https://web.example.test/dashboard?tab=home");
      const view = await loadPortalView(await workspaceContext(h, ws), portal);
      expect(view.returnUri).toBe("https://web.example.test/dashboard?tab=home");
      const done = await call(h, `/t/${ws}/account/close`, { form: { csrf: view.csrf }, cookie: jar.header(), headers: { origin: PUBLIC_URL } });
      expect(done.status).toBe(303);
      expect(done.headers.get("location")).toBe("https://web.example.test/dashboard?tab=home");
      // A home page on another origin (written around the workspace file's check) is not followed: the origin rule.
      await setClient(WEB.client_id, { homeUri: "https://elsewhere.example.test/" });
      expect((await live((await directLink(jar.take(done))).jar))!.returnUri).toBe("https://web.example.test/");
    } finally {
      await setClient(WEB.client_id, { homeUri: null });
    }
  });

  it("reuses a live hosted session that meets the application's policy", async () => {
    const { jar } = await directLink();
    const again = await directLink(jar);
    expect(again.signedIn).toBe(false);
    expect(again.location).toBe(`/t/${ws}/account`);
  });

  it("steps up a live session that does not meet the application's policy", async () => {
    const { jar } = await directLink();
    await setClient(WEB.client_id, { authPolicy: { mfa: "required" } });
    try {
      const res = await call(h, link(WEB.client_id), { cookie: jar.header() });
      expect(res.status).toBe(303);
      expect(new URL(res.headers.get("location")!, PUBLIC_URL).pathname).toBe(`/t/${ws}/sign-in`);
    } finally {
      await setClient(WEB.client_id, { authPolicy: {} });
    }
  });
});

describe("the portal session", () => {
  it("lasts at most 30 minutes (injected clock)", async () => {
    const { jar } = await directLink();
    h.clock.advance(PORTAL_SESSION_MS - SECOND);
    expect(await live(jar)).not.toBeNull();
    h.clock.advance(SECOND);
    expect(await live(jar)).toBeNull();
  });

  it("is bound to the hosted session cookie of the same session", async () => {
    const { jar } = await directLink();
    const portalCookie = `lk_portal=${jar.get("lk_portal")}`;
    expect(await live(portalCookie)).toBeNull();
    const other = await directLink(new Jar(), BOB);
    expect(await live(`${portalCookie}; lk_session=${other.jar.get("lk_session")}`)).toBeNull();
    // A wrong secret in either cookie.
    const [id] = jar.get("lk_portal")!.split(".");
    expect(await live(`lk_portal=${id}.wrong; lk_session=${jar.get("lk_session")}`)).toBeNull();
    const [sid] = jar.get("lk_session")!.split(".");
    expect(await live(`${portalCookie}; lk_session=${sid}.wrong`)).toBeNull();
    expect(await live(jar)).not.toBeNull();
  });

  it("ends at once when the hosted session ends", async () => {
    const { jar } = await directLink();
    const ctx = await workspaceContext(h, ws);
    await endHostedSession(ctx, readSessionCookie(jar.header())!.id, "test");
    expect(await live(jar)).toBeNull();
  });

  it("ends at once when the user is disabled, and while the client is disabled or stops offering the portal", async () => {
    const { jar } = await directLink();
    await setClient(WEB.client_id, { active: false });
    expect(await live(jar)).toBeNull();
    await setClient(WEB.client_id, { active: true });
    await setClient(WEB.client_id, { accountSecurity: false });
    expect(await live(jar)).toBeNull();
    await setClient(WEB.client_id, { accountSecurity: true });
    expect(await live(jar)).not.toBeNull();
    await h.service.db.update(users).set({ status: "disabled" }).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, ADA.email)));
    try {
      expect(await live(jar)).toBeNull();
    } finally {
      await h.service.db.update(users).set({ status: "active" }).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, ADA.email)));
    }
  });

  it("opened for a grant, ends at once when the grant is revoked", async () => {
    const signedIn = await signIn(h, ws, { ...WEB, email: ADA.email, password: ADA.password });
    const token = await exchangeCode(h, ws, {
      code: signedIn.callback.searchParams.get("code")!,
      redirect_uri: WEB.redirect_uri,
      verifier: signedIn.verifier,
      authorization: `Basic ${Buffer.from(`${WEB.client_id}:${WEB.secret}`).toString("base64")}`,
    });
    expect(token.status).toBe(200);
    const ctx = await workspaceContext(h, ws);
    const sessionId = readSessionCookie(signedIn.jar.header())!.id;
    const [grant] = await h.service.db.select().from(grants).where(and(eq(grants.workspaceId, ws), eq(grants.sessionId, sessionId)));
    const opened = await openPortalSession(ctx, { userId: grant.userId, sessionId, clientPk: grant.clientPk, grantId: grant.id, returnUri: "https://web.example.test/settings" });
    signedIn.jar.take(new Response(null, { headers: { "set-cookie": opened.cookie } }));
    expect((await live(signedIn.jar))?.grantId).toBe(grant.id);
    await revokeGrantAndTokens(ctx, grant.id, "test");
    expect(await live(signedIn.jar)).toBeNull();
  });

  it("ignores a portal cookie without its session (another browser's hosted cookie cannot carry it)", async () => {
    const { jar } = await directLink();
    h.clock.advance(10 * MINUTE);
    expect(await live(jar)).not.toBeNull();
    expect(await live(`lk_session=${jar.get("lk_session")}`)).toBeNull();
  });

  it("refuses a portal form post without a live portal session with the hosted 'session ended' page", async () => {
    const { jar } = await directLink();
    h.clock.advance(PORTAL_SESSION_MS);
    for (const cookie of [jar.header(), ""]) {
      const res = await call(h, `/t/${ws}/account/verify/password`, { form: { csrf: "x", password: ADA.password }, cookie, headers: { origin: PUBLIC_URL } });
      expect(res.status).toBe(401);
      expect(res.headers.get("cache-control")).toContain("no-store");
      expect(await res.text()).toContain("portal_session_ended");
    }
  });

  it("'Done' ends the portal session at once, clears its cookie and goes back to the application", async () => {
    const { jar } = await directLink();
    const ctx = await workspaceContext(h, ws);
    const { csrf } = await loadPortalView(ctx, (await live(jar))!);
    const res = await call(h, `/t/${ws}/account/close`, { form: { csrf }, cookie: jar.header(), headers: { origin: PUBLIC_URL } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("https://web.example.test/");
    expect(res.headers.getSetCookie().some((c) => c.startsWith("lk_portal=;") && c.includes("Max-Age=0"))).toBe(true);
    expect(await live(jar)).toBeNull();
    // The hosted session stays: the direct link opens a new portal without a sign-in.
    expect((await directLink(jar.take(res))).signedIn).toBe(false);
  });
});
