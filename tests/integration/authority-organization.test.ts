/**
 * A hosted session of an organization (enterprise sign-in) stands on that organization and its
 * enterprise connection: when the user's membership is removed, the organization deactivated or
 * the connection disabled, the session check, UserInfo, introspection and refresh end with it
 * (lib/authority: the organization and connection links), and the permission check denies. Each
 * case also shows that the link is the single reason: restored, the same token is live again.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { accessTokens, authorizationCodes, enterpriseConnections, hostedSessions, organizationMembers, organizations, users } from "../../db/schema";
import { newId, sha256Hex } from "../../lib/crypto";
import { ACME, ADA, API, authzWorkspace, WEB } from "../helpers/fixtures";
import { humanTokens } from "../helpers/lifecycle";
import { basic, call, createHarness, exchangeCode, Jar, PUBLIC_URL, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";

let h: Harness;
const ws = uniqueWorkspaceId("orgchain");
let acme: string;
let adaId: string;

beforeAll(async () => {
  h = await createHarness();
  await seed(h, authzWorkspace(ws));
  [{ id: acme }] = await h.service.db.select({ id: organizations.id }).from(organizations).where(and(eq(organizations.workspaceId, ws), eq(organizations.slug, ACME)));
  [{ id: adaId }] = await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, ADA.email)));
});

/** Enterprise sign-in records the session's organization and connection; set them directly here. */
async function enterpriseSession(sessionId: string): Promise<string> {
  const connectionId = newId();
  const now = h.clock.now();
  await h.service.db.insert(enterpriseConnections).values({ id: connectionId, workspaceId: ws, organizationId: acme, name: "Acme SSO", kind: "oidc", createdAt: now, updatedAt: now });
  await h.service.db.update(hostedSessions).set({ organizationId: acme, connectionId }).where(eq(hostedSessions.id, sessionId));
  return connectionId;
}

/** Ada signed in to the web app in an Acme session through its connection, with an access token for API. */
async function signedIn() {
  const tokens = await humanTokens(h, ws, WEB, ADA, { scope: "openid email read:things", resource: API, jar: new Jar() });
  const [{ sessionId }] = await h.service.db.select({ sessionId: accessTokens.sessionId }).from(accessTokens).where(eq(accessTokens.tokenHash, sha256Hex(tokens.access_token)));
  const connectionId = await enterpriseSession(sessionId!);
  return { ...tokens, sessionId: sessionId!, connectionId };
}

const bearer = (path: string, token: string) => call(h, `/t/${ws}${path}`, { headers: { authorization: `Bearer ${token}` } });
const introspect = async (token: string) =>
  (await (await call(h, `/t/${ws}/oauth2/introspect`, { form: { token }, headers: { authorization: basic(WEB.client_id, WEB.secret) } })).json()).active;
async function permitted(token: string): Promise<unknown> {
  const res = await call(h, `/t/${ws}/authorization/check`, {
    method: "POST",
    body: JSON.stringify({ resource: API, permission: "read:things", organization_id: null }),
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  });
  expect(res.status).toBe(200);
  return (await res.json()).allowed;
}
const refresh = (token: string) =>
  call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: token }, headers: { authorization: basic(WEB.client_id, WEB.secret) } });

async function expectLive(t: { access_token: string; refresh_token: string }) {
  const check = await bearer("/oidc/session", t.access_token);
  expect(check.status).toBe(200);
  expect((await check.json()).active).toBe(true);
  const info = await bearer("/oidc/userinfo", t.access_token);
  expect(info.status).toBe(200);
  expect(await info.json()).toMatchObject({ organization_id: acme });
  expect(await introspect(t.access_token)).toBe(true);
  expect(await introspect(t.refresh_token)).toBe(true);
  expect(await permitted(t.access_token)).toBe(true);
}

/** Ended everywhere; the refresh grant refuses (and spends the token, as for any ended authority). */
async function expectEnded(t: { access_token: string; refresh_token: string }) {
  const check = await bearer("/oidc/session", t.access_token);
  expect(check.status).toBe(401);
  expect(check.headers.get("www-authenticate")).toMatch(/^Bearer/);
  expect((await bearer("/oidc/userinfo", t.access_token)).status).toBe(401);
  expect(await introspect(t.access_token)).toBe(false);
  expect(await introspect(t.refresh_token)).toBe(false);
  // Still the caller's token: answered, and denied (not a 401), as before for the organization.
  expect(await permitted(t.access_token)).toBe(false);
}

async function expectRefreshRefused(refreshToken: string) {
  const res = await refresh(refreshToken);
  expect(res.status).toBe(400);
  expect(await res.json()).toEqual({ error: "invalid_grant", error_description: "The session or authorization behind this refresh token has ended" });
}

describe("an organization session's authority", () => {
  const adaInAcme = () => and(eq(organizationMembers.workspaceId, ws), eq(organizationMembers.organizationId, acme), eq(organizationMembers.userId, adaId));

  async function withoutMembership(work: () => Promise<void>) {
    const [row] = await h.service.db.select().from(organizationMembers).where(adaInAcme());
    await h.service.db.delete(organizationMembers).where(adaInAcme());
    try {
      await work();
    } finally {
      await h.service.db.insert(organizationMembers).values(row).onConflictDoNothing();
    }
  }

  it("ends when the user's membership of the session's organization is removed", async () => {
    const t = await signedIn();
    await expectLive(t);
    await withoutMembership(async () => {
      await expectEnded(t);
      await expectRefreshRefused(t.refresh_token);
    });
    // The membership was the single reason: the same access token is live again.
    expect((await bearer("/oidc/session", t.access_token)).status).toBe(200);
    expect((await bearer("/oidc/userinfo", t.access_token)).status).toBe(200);
  });

  it("ends while the session's organization is deactivated", async () => {
    const t = await signedIn();
    await expectLive(t);
    await h.service.db.update(organizations).set({ active: false }).where(eq(organizations.id, acme));
    try {
      await expectEnded(t);
      await expectRefreshRefused(t.refresh_token);
    } finally {
      await h.service.db.update(organizations).set({ active: true }).where(eq(organizations.id, acme));
    }
    expect((await bearer("/oidc/session", t.access_token)).status).toBe(200);
    expect((await bearer("/oidc/userinfo", t.access_token)).status).toBe(200);
  });

  it("ends while the session's enterprise connection is disabled", async () => {
    const t = await signedIn();
    await expectLive(t);
    await h.service.db.update(enterpriseConnections).set({ active: false }).where(eq(enterpriseConnections.id, t.connectionId));
    try {
      await expectEnded(t);
      await expectRefreshRefused(t.refresh_token);
    } finally {
      await h.service.db.update(enterpriseConnections).set({ active: true }).where(eq(enterpriseConnections.id, t.connectionId));
    }
    expect((await bearer("/oidc/session", t.access_token)).status).toBe(200);
    expect((await bearer("/oidc/userinfo", t.access_token)).status).toBe(200);
  });

  it("ends when the session's enterprise connection is deleted", async () => {
    const t = await signedIn();
    // The session keeps its reference only as long as the row exists (the foreign key cascades to the
    // session), so a deleted connection takes the session with it: ended all the same.
    await h.service.db.delete(enterpriseConnections).where(eq(enterpriseConnections.id, t.connectionId));
    expect((await bearer("/oidc/session", t.access_token)).status).toBe(401);
    expect(await introspect(t.refresh_token)).toBe(false);
    const res = await refresh(t.refresh_token);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe("invalid_grant");
  });

  it("refreshes while every link holds, and the new tokens stand on the same organization", async () => {
    const t = await signedIn();
    const res = await refresh(t.refresh_token);
    expect(res.status).toBe(200);
    const next = await res.json();
    expect((await bearer("/oidc/session", next.access_token)).status).toBe(200);
    await withoutMembership(async () => {
      expect((await bearer("/oidc/session", next.access_token)).status).toBe(401);
      await expectRefreshRefused(next.refresh_token);
    });
  });

  it("refuses a code issued in the session once its organization membership is gone", async () => {
    const r = await signIn(h, ws, { ...WEB, ...ADA, scope: "openid" });
    const code = r.callback.searchParams.get("code")!;
    const [{ sessionId }] = await h.service.db.select({ sessionId: authorizationCodes.sessionId }).from(authorizationCodes).where(eq(authorizationCodes.codeHash, sha256Hex(code)));
    await enterpriseSession(sessionId);
    await withoutMembership(async () => {
      const res = await exchangeCode(h, ws, { code, redirect_uri: WEB.redirect_uri, verifier: r.verifier, authorization: basic(WEB.client_id, WEB.secret) });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: "invalid_grant", error_description: "The authorization behind this code is no longer valid" });
    });
  });

  it("does not reuse the browser's hosted session for a new sign-in once its organization membership is gone", async () => {
    const jar = new Jar();
    const t = await humanTokens(h, ws, WEB, ADA, { scope: "openid", jar });
    const [{ sessionId }] = await h.service.db.select({ sessionId: accessTokens.sessionId }).from(accessTokens).where(eq(accessTokens.tokenHash, sha256Hex(t.access_token)));
    await enterpriseSession(sessionId!);
    const authorize = async () => {
      const query = new URLSearchParams({
        client_id: WEB.client_id,
        redirect_uri: WEB.redirect_uri,
        response_type: "code",
        scope: "openid",
        state: "s".repeat(32),
        nonce: "n".repeat(32),
        code_challenge: "c".repeat(43),
        code_challenge_method: "S256",
      });
      const res = await call(h, `/t/${ws}/oauth2/authorize?${query}`, { cookie: jar.header() });
      expect(res.status).toBe(303);
      return new URL(res.headers.get("location")!, PUBLIC_URL);
    };
    // While the session holds, it is reused: straight back to the application with a code.
    expect((await authorize()).origin).toBe(new URL(WEB.redirect_uri).origin);
    await withoutMembership(async () => {
      const location = await authorize();
      expect(location.origin).toBe(PUBLIC_URL);
      expect(location.pathname).toBe(`/t/${ws}/sign-in`);
    });
  });
});
