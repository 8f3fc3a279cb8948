import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { decodeJwt } from "jose";
import { grants, hostedSessions, refreshTokens } from "../../db/schema";
import { openDatabase, type DatabaseHandle } from "../../db/client";
import { sha256Hex } from "../../lib/crypto";
import { createService } from "../../lib/service";
import { authorizeQuery, basic, call, createHarness, Jar, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, BOB, M2M, MINIMAL, SPA, WEB, standardWorkspace } from "../helpers/fixtures";
import { auditRows, humanTokens, type HumanTokens } from "../helpers/lifecycle";

let h: Harness;
const ws = uniqueWorkspaceId("logout");
const SPA_SIGNED_OUT = "https://app.example.test/";
const WEB_SIGNED_OUT = "https://web.example.test/signed-out";

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

const logoutUrl = (params: Record<string, string> | string) =>
  `/t/${ws}/oidc/logout?${typeof params === "string" ? params : new URLSearchParams(params)}`;
const logout = (params: Record<string, string> | string, jar?: Jar) => call(h, logoutUrl(params), { cookie: jar?.header() });
const spaLogout = (jar?: Jar) => logout({ client_id: SPA.client_id, post_logout_redirect_uri: SPA_SIGNED_OUT }, jar);
const sessionCheck = (at: string) => call(h, `/t/${ws}/oidc/session`, { headers: { authorization: `Bearer ${at}` } });
const refresh = (rt: string, client: { client_id: string; secret?: string }) =>
  call(h, `/t/${ws}/oauth2/token`, {
    form: { grant_type: "refresh_token", refresh_token: rt, ...(client.secret ? {} : { client_id: client.client_id }) },
    headers: client.secret ? { authorization: basic(client.client_id, client.secret) } : {},
  });

function sessionIdOf(t: HumanTokens): string {
  return decodeJwt(t.id_token).sid as string;
}

async function expectHostedError(res: Response, status = 400) {
  expect(res.status).toBe(status);
  expect(res.headers.get("location")).toBeNull();
  expect(res.headers.get("content-type")).toMatch(/^text\/html/);
  expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  expect(res.headers.get("referrer-policy")).toBe("no-referrer");
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  expect(res.headers.getSetCookie()).toEqual([]);
  return res.text();
}

/** One browser (jar) signed in to the SPA and the web app: two grants in one hosted session. */
async function browserWithTwoGrants() {
  const spa = await humanTokens(h, ws, SPA, ADA);
  const web = await humanTokens(h, ws, WEB, ADA, { jar: spa.jar });
  expect(sessionIdOf(web)).toBe(sessionIdOf(spa));
  return { spa, web, jar: spa.jar };
}

describe("GET /oidc/logout: success", () => {
  it("ends the hosted session, clears the cookie and answers 303 to the registered destination", async () => {
    const { spa, jar } = await browserWithTwoGrants();
    const res = await spaLogout(jar);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(SPA_SIGNED_OUT);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const cookies = res.headers.getSetCookie();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatch(new RegExp(`^lk_session=; Path=/t/${ws}; .*Max-Age=0`));
    for (const attribute of ["Secure", "HttpOnly", "SameSite=Lax"]) expect(cookies[0]).toContain(attribute);
    const [session] = await h.service.db.select().from(hostedSessions).where(eq(hostedSessions.id, sessionIdOf(spa)));
    expect(session.endedAt?.getTime()).toBe(h.clock.now().getTime());
    expect(session.endReason).toBe("logout");
  });

  it("ends every grant of the session: session check and refresh fail for all its clients", async () => {
    const { spa, web, jar } = await browserWithTwoGrants();
    expect((await sessionCheck(web.access_token)).status).toBe(200);
    expect((await spaLogout(jar)).status).toBe(303);
    expect((await sessionCheck(spa.access_token)).status).toBe(401);
    expect((await sessionCheck(web.access_token)).status).toBe(401);
    const r1 = await refresh(spa.refresh_token, SPA);
    expect(r1.status).toBe(400);
    expect((await r1.json()).error).toBe("invalid_grant");
    expect((await refresh(web.refresh_token, WEB)).status).toBe(400);
    const introspected = await call(h, `/t/${ws}/oauth2/introspect`, { form: { token: web.access_token }, headers: { authorization: basic(WEB.client_id, WEB.secret) } });
    expect(await introspected.json()).toEqual({ active: false });
  });

  it("leaves other browsers' sessions of the same user alone", async () => {
    const here = await humanTokens(h, ws, SPA, ADA);
    const elsewhere = await humanTokens(h, ws, SPA, ADA);
    expect(sessionIdOf(here)).not.toBe(sessionIdOf(elsewhere));
    expect((await spaLogout(here.jar)).status).toBe(303);
    expect((await sessionCheck(here.access_token)).status).toBe(401);
    expect((await sessionCheck(elsewhere.access_token)).status).toBe(200);
  });

  it("works for a confidential client to its own registered destination", async () => {
    const { spa, web, jar } = await browserWithTwoGrants();
    const res = await logout({ client_id: WEB.client_id, post_logout_redirect_uri: WEB_SIGNED_OUT }, jar);
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(WEB_SIGNED_OUT);
    expect((await sessionCheck(spa.access_token)).status).toBe(401);
    expect((await sessionCheck(web.access_token)).status).toBe(401);
  });

  it("makes the next authorization ask for credentials again, even with the old cookie", async () => {
    const t = await humanTokens(h, ws, SPA, ADA);
    const oldCookie = t.jar.header();
    expect((await spaLogout(t.jar)).status).toBe(303);
    const { query } = authorizeQuery(SPA);
    const res = await call(h, `/t/${ws}/oauth2/authorize?${query}`, { cookie: oldCookie });
    expect(res.status).toBe(303);
    expect(new URL(res.headers.get("location")!, PUBLIC_URL).pathname).toBe(`/t/${ws}/sign-in`);
  });

  it("records a session.logout audit event with workspace, client, subject, reason and time", async () => {
    const t = await humanTokens(h, ws, SPA, BOB);
    expect((await spaLogout(t.jar)).status).toBe(303);
    const rows = (await auditRows(h, ws, "session.logout")).filter((r) => r.subject === decodeJwt(t.id_token).sub);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ workspaceId: ws, clientId: SPA.client_id, reason: "hosted_logout" });
    expect(rows[0].createdAt.getTime()).toBe(h.clock.now().getTime());
    expect(rows[0].data).toMatchObject({ session_id: sessionIdOf(t) });
  });
});

describe("GET /oidc/logout: the query is exactly client_id and a registered post_logout_redirect_uri", () => {
  it.each([
    ["id_token_hint", { id_token_hint: "eyJhbGciOiJFUzI1NiJ9.e30.sig" }],
    ["state", { state: "abcdefghijklmnopqrstuvwxyz" }],
    ["ui_locales", { ui_locales: "en" }],
    ["logout_hint", { logout_hint: "ada" }],
    ["an arbitrary parameter", { foo: "bar" }],
  ])("refuses %s on a hosted page, never redirecting, and the session stays", async (_name, extra) => {
    const t = await humanTokens(h, ws, SPA, ADA);
    const res = await logout({ client_id: SPA.client_id, post_logout_redirect_uri: SPA_SIGNED_OUT, ...extra }, t.jar);
    const page = await expectHostedError(res);
    expect(page).toContain(Object.keys(extra)[0]);
    expect((await sessionCheck(t.access_token)).status).toBe(200);
  });

  it("refuses duplicated or missing parameters", async () => {
    const t = await humanTokens(h, ws, SPA, ADA);
    const dest = encodeURIComponent(SPA_SIGNED_OUT);
    for (const query of [
      `client_id=spa&client_id=spa&post_logout_redirect_uri=${dest}`,
      `client_id=spa&post_logout_redirect_uri=${dest}&post_logout_redirect_uri=${dest}`,
      `client_id=spa`,
      `post_logout_redirect_uri=${dest}`,
      `client_id=&post_logout_redirect_uri=${dest}`,
      ``,
    ]) {
      await expectHostedError(await logout(query, t.jar));
    }
    expect((await sessionCheck(t.access_token)).status).toBe(200);
  });

  it("refuses a destination not registered for that client, even a near match", async () => {
    const t = await humanTokens(h, ws, SPA, ADA);
    for (const destination of [
      "https://evil.example/",
      "https://app.example.test",
      "https://app.example.test/?next=/",
      "https://app.example.test/#x",
      "HTTPS://APP.EXAMPLE.TEST/",
      WEB_SIGNED_OUT, // registered, but for another client
      SPA.redirect_uri, // the login callback is not a logout destination
    ]) {
      const res = await logout({ client_id: SPA.client_id, post_logout_redirect_uri: destination }, t.jar);
      expect(await expectHostedError(res), destination).toContain("not registered");
    }
    // A client with no registered destination has none.
    await expectHostedError(await logout({ client_id: MINIMAL.client_id, post_logout_redirect_uri: SPA_SIGNED_OUT }, t.jar));
    expect((await sessionCheck(t.access_token)).status).toBe(200);
  });

  it("refuses an unknown client, and an M2M client, on a hosted page", async () => {
    const t = await humanTokens(h, ws, SPA, ADA);
    await expectHostedError(await logout({ client_id: "nobody", post_logout_redirect_uri: SPA_SIGNED_OUT }, t.jar), 404);
    await expectHostedError(await logout({ client_id: M2M.client_id, post_logout_redirect_uri: SPA_SIGNED_OUT }, t.jar));
    expect((await sessionCheck(t.access_token)).status).toBe(200);
  });

  it("answers only GET", async () => {
    const res = await call(h, logoutUrl({ client_id: SPA.client_id, post_logout_redirect_uri: SPA_SIGNED_OUT }), { method: "POST", body: "" });
    expect(res.status).toBe(405);
  });
});

describe("GET /oidc/logout: it needs the hosted session and an active grant of that client in it", () => {
  it("refuses without the hosted cookie, and with a forged or foreign one", async () => {
    const t = await humanTokens(h, ws, SPA, ADA);
    await expectHostedError(await spaLogout());
    const [id] = t.jar.get("lk_session")!.split(".");
    const forged = new Jar().take(new Response(null, { headers: { "set-cookie": `lk_session=${id}.not-the-secret` } }));
    await expectHostedError(await spaLogout(forged));
    const other = await humanTokens(h, ws, WEB, BOB); // another browser, another session, no SPA grant
    await expectHostedError(await spaLogout(other.jar));
    expect((await sessionCheck(t.access_token)).status).toBe(200);
    expect((await sessionCheck(other.access_token)).status).toBe(200);
  });

  it("when the session holds no grant of that client: says the user is signed out of it, links to the destination; the session stays", async () => {
    const web = await humanTokens(h, ws, WEB, ADA);
    const page = await expectHostedError(await spaLogout(web.jar));
    expect(page).toContain("<h1>You are signed out of Single-page app</h1>");
    expect(page).toContain(`<a href="${SPA_SIGNED_OUT}">Continue to Single-page app</a>`);
    expect((await sessionCheck(web.access_token)).status).toBe(200);
  });

  it("after the grant was revoked first (SPEC's ordering caveat): no dead end, a link to the registered destination, no redirect, the hosted session kept", async () => {
    const t = await humanTokens(h, ws, SPA, ADA);
    const revoked = await call(h, `/t/${ws}/oauth2/revoke`, { form: { token: t.refresh_token, client_id: SPA.client_id } });
    expect(revoked.status).toBe(200);
    const res = await spaLogout(t.jar);
    // Not followed by itself (no Location, no refresh), and the cookie is left alone.
    expect(res.headers.get("refresh")).toBeNull();
    const page = await expectHostedError(res);
    expect(page).toContain("<h1>You are signed out of Single-page app</h1>");
    expect(page).toContain("it may have been revoked already");
    expect(page).toContain("You are still signed in to Latchkey in this browser");
    // The one link: the registered destination given, nothing else.
    expect([...page.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1])).toEqual([SPA_SIGNED_OUT]);
    expect(page).not.toContain("http-equiv");
    // The hosted session itself was not ended.
    const [session] = await h.service.db.select().from(hostedSessions).where(eq(hostedSessions.id, sessionIdOf(t)));
    expect(session.endedAt).toBeNull();
    expect(await auditRows(h, ws, "session.logout").then((rows) => rows.filter((r) => (r.data as { session_id?: string }).session_id === sessionIdOf(t)))).toHaveLength(0);
  });

  it("after the grant was revoked, an unregistered destination is still refused: nothing is offered", async () => {
    const t = await humanTokens(h, ws, SPA, ADA);
    expect((await call(h, `/t/${ws}/oauth2/revoke`, { form: { token: t.refresh_token, client_id: SPA.client_id } })).status).toBe(200);
    const page = await expectHostedError(await logout({ client_id: SPA.client_id, post_logout_redirect_uri: "https://evil.example.test/" }, t.jar));
    expect(page).toContain("not registered for this application");
    expect(page).not.toContain("evil.example.test");
    expect(page).not.toContain("<a ");
    // Another client's registered destination is not this client's.
    const other = await expectHostedError(await logout({ client_id: SPA.client_id, post_logout_redirect_uri: WEB_SIGNED_OUT }, t.jar));
    expect(other).not.toContain("<a ");
  });

  it("says the same in the request's language", async () => {
    const t = await humanTokens(h, ws, SPA, ADA);
    expect((await call(h, `/t/${ws}/oauth2/revoke`, { form: { token: t.refresh_token, client_id: SPA.client_id } })).status).toBe(200);
    const res = await call(h, logoutUrl({ client_id: SPA.client_id, post_logout_redirect_uri: SPA_SIGNED_OUT }), { cookie: t.jar.header(), headers: { "accept-language": "de" } });
    const page = await expectHostedError(res);
    expect(page).toContain('<html lang="de">');
    expect(page).toContain("<h1>Sie sind von Single-page app abgemeldet</h1>");
    expect(page).toContain(`<a href="${SPA_SIGNED_OUT}">Weiter zu Single-page app</a>`);
  });

  it("logout first, then revocation: both succeed", async () => {
    const t = await humanTokens(h, ws, SPA, ADA);
    expect((await spaLogout(t.jar)).status).toBe(303);
    const revoked = await call(h, `/t/${ws}/oauth2/revoke`, { form: { token: t.refresh_token, client_id: SPA.client_id } });
    expect(revoked.status).toBe(200);
    expect((await refresh(t.refresh_token, SPA)).status).toBe(400);
  });

  it("refuses a second logout with the same (ended) session", async () => {
    const t = await humanTokens(h, ws, SPA, ADA);
    const cookie = t.jar.header();
    expect((await call(h, logoutUrl({ client_id: SPA.client_id, post_logout_redirect_uri: SPA_SIGNED_OUT }), { cookie })).status).toBe(303);
    const again = await call(h, logoutUrl({ client_id: SPA.client_id, post_logout_redirect_uri: SPA_SIGNED_OUT }), { cookie });
    await expectHostedError(again);
    expect((await auditRows(h, ws, "session.logout")).filter((r) => (r.data as { session_id?: string }).session_id === sessionIdOf(t))).toHaveLength(1);
  });

  it("refuses once the hosted session has expired (12 hours idle)", async () => {
    const t = await humanTokens(h, ws, SPA, ADA);
    h.clock.advance(12 * 3600_000 + 1);
    await expectHostedError(await spaLogout(t.jar));
  });

  it("refuses when the client's grant in the session has expired though the session lives", async () => {
    const t = await humanTokens(h, ws, SPA, ADA);
    const [row] = await h.service.db.select({ grantId: refreshTokens.grantId }).from(refreshTokens).where(eq(refreshTokens.tokenHash, sha256Hex(t.refresh_token)));
    await h.service.db.update(grants).set({ idleExpiresAt: h.clock.now() }).where(eq(grants.id, row.grantId));
    await expectHostedError(await spaLogout(t.jar));
    const [session] = await h.service.db.select().from(hostedSessions).where(eq(hostedSessions.id, sessionIdOf(t)));
    expect(session.endedAt).toBeNull();
  });

  it("does not answer for another workspace's issuer with this workspace's cookie", async () => {
    const other = uniqueWorkspaceId("logout-other");
    await seed(h, standardWorkspace(other));
    const t = await humanTokens(h, ws, SPA, ADA);
    const res = await call(h, `/t/${other}/oidc/logout?${new URLSearchParams({ client_id: SPA.client_id, post_logout_redirect_uri: SPA_SIGNED_OUT })}`, { cookie: t.jar.header() });
    await expectHostedError(res);
    expect((await sessionCheck(t.access_token)).status).toBe(200);
  });
});

describe("GET /oidc/logout: an unreachable database", () => {
  let down: DatabaseHandle;
  beforeAll(async () => {
    down = await openDatabase({ databaseUrl: "postgres://postgres@127.0.0.1:9/latchkey" });
  });
  afterAll(async () => down.close());

  it("shows a 503 hosted page: no redirect, the cookie kept, the session not ended", async () => {
    const t = await humanTokens(h, ws, SPA, ADA);
    // The database goes away after the workspace was resolved (the router caches it for seconds):
    // the failure reaches the logout itself.
    const service = createService(down.db, h.service.config, h.clock);
    for (const [key, value] of h.service.cache) service.cache.set(key, value);
    const broken = { ...h, service };
    const res = await call(broken, logoutUrl({ client_id: SPA.client_id, post_logout_redirect_uri: SPA_SIGNED_OUT }), { cookie: t.jar.header() });
    await expectHostedError(res, 503);
    expect((await sessionCheck(t.access_token)).status).toBe(200);
  });
});
