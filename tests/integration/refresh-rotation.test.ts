/**
 * Refresh rotation is one statement that supersedes the token, checks the family's authority,
 * computes the scope and issues. Each rule it evaluates has a case here that fails if the rule
 * were dropped from the statement.
 */
import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { and, eq, isNull, sql } from "drizzle-orm";
import { accessTokens, apiGrants, apis, auditEvents, clients, grants, hostedSessions, organizations, refreshTokens, rolePermissions, roles, userRoles, users } from "../../db/schema";
import { sha256Hex } from "../../lib/crypto";
import { contextFor, resolveWorkspace } from "../../lib/server/router";
import { OAuthError } from "../../lib/oauth/errors";
import { createService } from "../../lib/service";
import { findClient } from "../../lib/oauth/clients";
import { effectiveHumanScope, effectiveHumanScopeSql, subjectFor } from "../../lib/oauth/issue";
import { isIdentityScope } from "../../lib/oauth/scopes";
import { refreshTokenGrant } from "../../lib/oauth/grants/refresh-token";
import { purgeRetained } from "../../lib/features/purge";
import { basic, call, createHarness, exchangeCode, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ACME, ADA, API, authzWorkspace, BOB, GLOBEX, M2M, OTHER_API, SPA, WEB } from "../helpers/fixtures";

let h: Harness;
const ws = uniqueWorkspaceId("rotation");
const DAY = 24 * 3600_000;
const ALL = "openid read:things write:things admin:things";

beforeAll(async () => {
  h = await createHarness();
  await seed(h, authzWorkspace(ws));
});

async function context(service = h.service) {
  return contextFor(service, (await resolveWorkspace(service, ws))!);
}

async function tokens(scope = "openid email", resource?: string) {
  const r = await signIn(h, ws, { ...SPA, ...ADA, scope, resource });
  const res = await exchangeCode(h, ws, { code: r.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: r.verifier, client_id: SPA.client_id });
  expect(res.status).toBe(200);
  const body = await res.json();
  const [family] = await h.service.db
    .select({ grant: grants })
    .from(refreshTokens)
    .innerJoin(grants, eq(grants.id, refreshTokens.grantId))
    .where(eq(refreshTokens.tokenHash, sha256Hex(body.refresh_token)));
  return { ...body, grant: family.grant };
}

const refresh = (rt: string, extra: Record<string, string> = {}) =>
  call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: rt, client_id: SPA.client_id, ...extra } });

async function refused(res: Response) {
  expect(res.status).toBe(400);
  return res.json();
}

const tokenState = async (rt: string) =>
  (await h.service.db.select({ state: refreshTokens.state }).from(refreshTokens).where(eq(refreshTokens.tokenHash, sha256Hex(rt))))[0]?.state;
const familyTokens = (grantId: string) => h.service.db.select().from(refreshTokens).where(eq(refreshTokens.grantId, grantId));
const familyAccess = (grantId: string) => h.service.db.select().from(accessTokens).where(eq(accessTokens.grantId, grantId));
const accessRow = async (at: string) => (await h.service.db.select().from(accessTokens).where(eq(accessTokens.tokenHash, sha256Hex(at))))[0];

async function userId(email: string) {
  return (await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, email))))[0].id;
}
async function organizationId(slug: string) {
  return (await h.service.db.select({ id: organizations.id }).from(organizations).where(and(eq(organizations.workspaceId, ws), eq(organizations.slug, slug))))[0].id;
}
async function apiId(audience: string) {
  return (await h.service.db.select({ id: apis.id }).from(apis).where(and(eq(apis.workspaceId, ws), eq(apis.audience, audience))))[0].id;
}

/** Statements and transactions the driver is asked for while `work` runs. */
async function driverCalls(work: () => Promise<unknown>): Promise<{ statements: number; transactions: number }> {
  const client = (h.service.db as unknown as { session: { client: Record<string, (...args: unknown[]) => unknown> } }).session.client;
  const names = h.handle.kind === "postgres" ? { statements: ["unsafe"], transactions: ["begin"] } : { statements: ["query", "exec"], transactions: ["transaction"] };
  const spies = {
    statements: names.statements.map((n) => vi.spyOn(client, n)),
    transactions: names.transactions.map((n) => vi.spyOn(client, n)),
  };
  try {
    await work();
    const count = (list: { mock: { calls: unknown[] } }[]) => list.reduce((sum, s) => sum + s.mock.calls.length, 0);
    return { statements: count(spies.statements), transactions: count(spies.transactions) };
  } finally {
    for (const s of [...spies.statements, ...spies.transactions]) s.mockRestore();
  }
}

/** The grant handler itself, with the client as authenticated before the call. */
async function handler() {
  const ctx = await context();
  const client = (await findClient(ctx, SPA.client_id))!;
  return (params: Map<string, string>) => refreshTokenGrant.handle(params, { client, credentialId: null, method: "none", corsOrigin: null }, ctx);
}
const params = (rt: string, extra: Record<string, string> = {}) => new Map(Object.entries({ grant_type: "refresh_token", refresh_token: rt, client_id: SPA.client_id, ...extra }));

describe("a rotation is one statement", () => {
  it("rotates with one statement and no transaction", async () => {
    const t = await tokens();
    const run = await handler();
    let body: Record<string, unknown> = {};
    const calls = await driverCalls(async () => {
      body = await run(params(t.refresh_token));
    });
    expect(calls).toEqual({ statements: 1, transactions: 0 });
    expect(body.scope).toBe("openid email");
    expect((await refresh(body.refresh_token as string)).status).toBe(200);
  });

  it("refuses a rule with that one statement too", async () => {
    const t = await tokens("openid");
    const run = await handler();
    const calls = await driverCalls(async () => {
      await expect(run(params(t.refresh_token, { scope: "openid email" }))).rejects.toBeInstanceOf(OAuthError);
    });
    expect(calls).toEqual({ statements: 1, transactions: 0 });
  });
});

describe("what a rotation writes", () => {
  it("issues an access token like the code exchange's, one current successor, and slides the family", async () => {
    const t = await tokens("openid email read:things", API);
    h.clock.advance(60_000);
    const now = h.clock.now();
    const body = await (await refresh(t.refresh_token)).json();
    expect(body).toMatchObject({ token_type: "Bearer", expires_in: 300, scope: "openid email read:things" });
    const [first, next] = [await accessRow(t.access_token), await accessRow(body.access_token)];
    expect(next).toMatchObject({
      workspaceId: ws,
      clientPk: first.clientPk,
      grantId: t.grant.id,
      userId: first.userId,
      sessionId: first.sessionId,
      credentialId: null,
      subject: first.subject,
      scope: ["openid", "email", "read:things"],
      apiId: first.apiId,
      revokedAt: null,
    });
    expect(next.createdAt).toEqual(now);
    expect(next.expiresAt).toEqual(new Date(now.getTime() + 300_000));
    const family = await familyTokens(t.grant.id);
    expect(family).toHaveLength(2);
    const old = family.find((r) => r.tokenHash === sha256Hex(t.refresh_token))!;
    const successor = family.find((r) => r.tokenHash === sha256Hex(body.refresh_token))!;
    expect(old).toMatchObject({ state: "superseded", supersededAt: now, replacedByHash: successor.tokenHash });
    expect(successor).toMatchObject({ state: "current", createdAt: now, supersededAt: null, replacedByHash: null });
    const [grant] = await h.service.db.select().from(grants).where(eq(grants.id, t.grant.id));
    expect(grant.lastUsedAt).toEqual(now);
    expect(grant.idleExpiresAt).toEqual(new Date(now.getTime() + 7 * DAY));
    expect(grant.credentialId).toBeNull();
  });

  it("caps the family's inactivity bound at its absolute bound", async () => {
    const t = await tokens();
    const absolute = new Date(h.clock.now().getTime() + DAY);
    await h.service.db.update(grants).set({ absoluteExpiresAt: absolute }).where(eq(grants.id, t.grant.id));
    expect((await refresh(t.refresh_token)).status).toBe(200);
    const [grant] = await h.service.db.select().from(grants).where(eq(grants.id, t.grant.id));
    expect(grant.idleExpiresAt).toEqual(absolute);
  });

  it("takes the subject the family recorded, also once its earlier access tokens are purged", async () => {
    const t = await tokens();
    const expected = subjectFor(await context(), SPA.client_id, t.grant.userId);
    const [recorded] = await h.service.db.select({ subject: grants.subject }).from(grants).where(eq(grants.id, t.grant.id));
    expect(recorded.subject).toBe(expected);
    h.clock.advance(2 * 3600_000);
    await purgeRetained(h.service, { workspaceId: ws, names: ["access_tokens", "revoked_workload_tokens"] });
    expect(await familyAccess(t.grant.id)).toHaveLength(0);
    const run = await handler();
    let body: Record<string, unknown> = {};
    expect(await driverCalls(async () => (body = await run(params(t.refresh_token))))).toEqual({ statements: 1, transactions: 0 });
    expect((await accessRow(body.access_token as string)).subject).toBe(expected);
  });

  it("computes and records the subject of a family created before families recorded it", async () => {
    const t = await tokens();
    const expected = subjectFor(await context(), SPA.client_id, t.grant.userId);
    await h.service.db.update(grants).set({ subject: null }).where(eq(grants.id, t.grant.id));
    const run = await handler();
    let body: Record<string, unknown> = {};
    // The one statement misses, the token is read, the statement runs again with the subject.
    expect(await driverCalls(async () => (body = await run(params(t.refresh_token))))).toEqual({ statements: 3, transactions: 0 });
    expect((await accessRow(body.access_token as string)).subject).toBe(expected);
    expect(await tokenState(t.refresh_token)).toBe("superseded");
    const [recorded] = await h.service.db.select({ subject: grants.subject }).from(grants).where(eq(grants.id, t.grant.id));
    expect(recorded.subject).toBe(expected);
    let again: Record<string, unknown> = {};
    expect(await driverCalls(async () => (again = await run(params(body.refresh_token as string))))).toEqual({ statements: 1, transactions: 0 });
    expect((await accessRow(again.access_token as string)).subject).toBe(expected);
  });

  it("issues under the current pairwise key when the family's earlier tokens were issued under another", async () => {
    const t = await tokens();
    const rekeyed = { ...h, service: createService(h.service.db, { ...h.service.config, masterKey: randomBytes(32) }, h.clock) };
    const res = await call(rekeyed, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: t.refresh_token, client_id: SPA.client_id } });
    expect(res.status).toBe(200);
    const subject = (await accessRow((await res.json()).access_token)).subject;
    expect(subject).toBe(subjectFor(await context(rekeyed.service), SPA.client_id, t.grant.userId));
    expect(subject).not.toBe((await accessRow(t.access_token)).subject);
    const [recorded] = await h.service.db.select({ subject: grants.subject }).from(grants).where(eq(grants.id, t.grant.id));
    expect(recorded.subject).toBe(subject);
  });
});

describe("the access token's scope", () => {
  it("narrows when a role is taken from the user, and widens again when it is given back (the family's ceiling stays)", async () => {
    const t = await tokens(ALL, API);
    expect(t.scope).toBe("openid read:things write:things");
    const [{ role }] = await h.service.db
      .select({ role: userRoles })
      .from(userRoles)
      .innerJoin(roles, eq(roles.id, userRoles.roleId))
      .where(and(eq(userRoles.userId, t.grant.userId), eq(roles.name, "writer"), isNull(userRoles.organizationId)));
    await h.service.db.delete(userRoles).where(eq(userRoles.id, role.id));
    try {
      const narrowed = await (await refresh(t.refresh_token)).json();
      expect(narrowed.scope).toBe("openid read:things");
      expect((await accessRow(narrowed.access_token)).scope).toEqual(["openid", "read:things"]);
      await h.service.db.insert(userRoles).values(role);
      const restored = await (await refresh(narrowed.refresh_token)).json();
      expect(restored.scope).toBe("openid read:things write:things");
    } finally {
      await h.service.db.insert(userRoles).values(role).onConflictDoNothing();
    }
  });

  it("counts the roles of the session's organization only: another organization's or the workspace's do not count", async () => {
    const t = await tokens(ALL, API);
    // Workspace level: reader and writer; admin is Ada's in acme only.
    expect(t.scope).toBe("openid read:things write:things");
    await h.service.db.update(hostedSessions).set({ organizationId: await organizationId(GLOBEX) }).where(eq(hostedSessions.id, t.grant.sessionId));
    const inGlobex = await (await refresh(t.refresh_token)).json();
    expect(inGlobex.scope).toBe("openid");
    await h.service.db.update(hostedSessions).set({ organizationId: await organizationId(ACME) }).where(eq(hostedSessions.id, t.grant.sessionId));
    const inAcme = await (await refresh(inGlobex.refresh_token)).json();
    expect(inAcme.scope).toBe("openid read:things admin:things");
  });

  it("leaves out what the client's API grant no longer lists", async () => {
    const t = await tokens(ALL, API);
    const where = and(eq(apiGrants.workspaceId, ws), eq(apiGrants.clientPk, t.grant.clientPk), eq(apiGrants.apiId, t.grant.apiId!));
    await h.service.db.update(apiGrants).set({ permissions: ["write:things", "admin:things"] }).where(where);
    try {
      expect((await (await refresh(t.refresh_token)).json()).scope).toBe("openid write:things");
    } finally {
      await h.service.db.update(apiGrants).set({ permissions: ["read:things", "write:things", "admin:things"] }).where(where);
    }
  });

  it("puts identity scopes first, then permissions, each in the order requested", async () => {
    const t = await tokens(ALL + " email", API);
    const body = await (await refresh(t.refresh_token, { scope: "write:things email read:things openid" })).json();
    expect(body.scope).toBe("email openid write:things read:things");
  });

  it("refuses a scope beyond the grant without spending the token: a retry with the granted scope succeeds, and nothing is taken for reuse", async () => {
    const t = await tokens("openid read:things", API);
    expect(await refused(await refresh(t.refresh_token, { scope: "openid write:things" }))).toEqual({
      error: "invalid_scope",
      error_description: "scope may only narrow the original grant",
    });
    expect(await tokenState(t.refresh_token)).toBe("current");
    expect(await familyTokens(t.grant.id)).toHaveLength(1);
    expect(await familyAccess(t.grant.id)).toHaveLength(1);
    // Asking too much again changes nothing either.
    expect((await refused(await refresh(t.refresh_token, { scope: "openid read:things write:things" }))).error).toBe("invalid_scope");
    const retry = await refresh(t.refresh_token, { scope: "openid read:things" });
    expect(retry.status).toBe(200);
    expect((await retry.json()).scope).toBe("openid read:things");
    expect(await tokenState(t.refresh_token)).toBe("superseded");
    const [family] = await h.service.db.select().from(grants).where(eq(grants.id, t.grant.id));
    expect(family.revokedAt).toBeNull();
    const reuse = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "refresh.reuse_detected")));
    expect(reuse.filter((e) => (e.data as { grant_id?: string }).grant_id === t.grant.id)).toHaveLength(0);
    // The spent token is still one use only: presenting it again is reuse.
    expect((await refused(await refresh(t.refresh_token))).error).toBe("invalid_grant");
    expect((await h.service.db.select().from(grants).where(eq(grants.id, t.grant.id)))[0].revokeReason).toBe("refresh_token_reuse");
  });

  it("refuses a scope beyond the grant of a superseded token as reuse all the same", async () => {
    const t = await tokens("openid read:things", API);
    expect((await refresh(t.refresh_token)).status).toBe(200);
    expect((await refused(await refresh(t.refresh_token, { scope: "openid write:things" }))).error).toBe("invalid_grant");
    expect((await h.service.db.select().from(grants).where(eq(grants.id, t.grant.id)))[0].revokeReason).toBe("refresh_token_reuse");
  });
});

describe("the family's authority, checked in the rotation", () => {
  const expired = { error: "invalid_grant", error_description: "The refresh token has expired" };
  const ended = { error: "invalid_grant", error_description: "The session or authorization behind this refresh token has ended" };

  async function expectRefusedAndSpent(t: { refresh_token: string; grant: { id: string } }, expected: object, extra: Record<string, string> = {}) {
    expect(await refused(await refresh(t.refresh_token, extra))).toEqual(expected);
    expect(await tokenState(t.refresh_token)).toBe("superseded");
    expect(await familyTokens(t.grant.id)).toHaveLength(1);
    expect(await familyAccess(t.grant.id)).toHaveLength(1);
  }

  it("refuses a family past its inactivity bound", async () => {
    const t = await tokens();
    await h.service.db.update(grants).set({ idleExpiresAt: h.clock.now() }).where(eq(grants.id, t.grant.id));
    await expectRefusedAndSpent(t, expired);
  });

  it("refuses a family past its absolute bound", async () => {
    const t = await tokens();
    await h.service.db.update(grants).set({ absoluteExpiresAt: h.clock.now() }).where(eq(grants.id, t.grant.id));
    await expectRefusedAndSpent(t, expired);
  });

  it("refuses an ended hosted session", async () => {
    const t = await tokens();
    await h.service.db.update(hostedSessions).set({ endedAt: h.clock.now(), endReason: "logout" }).where(eq(hostedSessions.id, t.grant.sessionId));
    await expectRefusedAndSpent(t, ended);
  });

  it("refuses a hosted session past its idle bound", async () => {
    const t = await tokens();
    await h.service.db.update(hostedSessions).set({ idleExpiresAt: h.clock.now() }).where(eq(hostedSessions.id, t.grant.sessionId));
    await expectRefusedAndSpent(t, ended);
  });

  it("refuses a hosted session past its absolute bound, though idle-fresh", async () => {
    const t = await tokens();
    await h.service.db.update(hostedSessions).set({ absoluteExpiresAt: h.clock.now() }).where(eq(hostedSessions.id, t.grant.sessionId));
    await expectRefusedAndSpent(t, ended);
  });

  it("refuses a disabled user", async () => {
    const t = await tokens();
    await h.service.db.update(users).set({ status: "disabled" }).where(eq(users.id, t.grant.userId));
    try {
      await expectRefusedAndSpent(t, ended);
    } finally {
      await h.service.db.update(users).set({ status: "active" }).where(eq(users.id, t.grant.userId));
    }
  });

  it("refuses a client deactivated after it authenticated", async () => {
    const t = await tokens();
    const run = await handler();
    const spa = and(eq(clients.workspaceId, ws), eq(clients.clientId, SPA.client_id));
    await h.service.db.update(clients).set({ active: false }).where(spa);
    try {
      await expect(run(params(t.refresh_token))).rejects.toMatchObject({ error: "invalid_grant", description: ended.error_description });
    } finally {
      await h.service.db.update(clients).set({ active: true }).where(spa);
    }
    expect(await tokenState(t.refresh_token)).toBe("superseded");
    expect(await familyAccess(t.grant.id)).toHaveLength(1);
  });

  it("checks expiry before the session, and the session before the scope", async () => {
    const a = await tokens("openid");
    await h.service.db.update(grants).set({ idleExpiresAt: h.clock.now() }).where(eq(grants.id, a.grant.id));
    await h.service.db.update(hostedSessions).set({ endedAt: h.clock.now() }).where(eq(hostedSessions.id, a.grant.sessionId));
    await expectRefusedAndSpent(a, expired, { scope: "openid email" });
    const b = await tokens("openid");
    await h.service.db.update(hostedSessions).set({ endedAt: h.clock.now() }).where(eq(hostedSessions.id, b.grant.sessionId));
    await expectRefusedAndSpent(b, ended, { scope: "openid email" });
  });
});

describe("another client presenting a refresh token", () => {
  const asWeb = (rt: string) =>
    call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: rt }, headers: { authorization: basic(WEB.client_id, WEB.secret) } });

  it("is refused without spending it: the owner still refreshes", async () => {
    const t = await tokens();
    expect(await refused(await asWeb(t.refresh_token))).toEqual({ error: "invalid_grant", error_description: "The refresh token was issued to another client" });
    expect(await tokenState(t.refresh_token)).toBe("current");
    expect(await familyTokens(t.grant.id)).toHaveLength(1);
    const res = await refresh(t.refresh_token);
    expect(res.status).toBe(200);
    expect((await res.json()).refresh_token).toBeTruthy();
  });

  it("does not end the family by presenting a superseded token of it", async () => {
    const t = await tokens();
    const next = await (await refresh(t.refresh_token)).json();
    expect(await refused(await asWeb(t.refresh_token))).toEqual({ error: "invalid_grant", error_description: "The refresh token is invalid, expired or revoked" });
    expect((await h.service.db.select().from(grants).where(eq(grants.id, t.grant.id)))[0].revokedAt).toBeNull();
    const reuse = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "refresh.reuse_detected")));
    expect(reuse.filter((e) => (e.data as { grant_id?: string }).grant_id === t.grant.id)).toHaveLength(0);
    expect((await refresh(next.refresh_token)).status).toBe(200);
  });
});

/**
 * The scope rule written out from the tables, independently of the SQL: identity scopes in
 * requested order, then the requested permissions the client's API grant lists and the user's
 * roles grant on that API at the organization's level (workspace level when null).
 */
async function expectedScope(input: { requested: string[]; clientPk: string; userId: string; apiId: string | null; organizationId: string | null }) {
  const identity = input.requested.filter(isIdentityScope);
  const wanted = input.requested.filter((s) => !isIdentityScope(s));
  if (!input.apiId) return identity;
  const [grant] = await h.service.db
    .select({ permissions: apiGrants.permissions })
    .from(apiGrants)
    .where(and(eq(apiGrants.workspaceId, ws), eq(apiGrants.clientPk, input.clientPk), eq(apiGrants.apiId, input.apiId)))
    .limit(1);
  if (!grant) return identity;
  const roleRows = await h.service.db
    .select({ permissions: rolePermissions.permissions })
    .from(userRoles)
    .innerJoin(rolePermissions, and(eq(rolePermissions.roleId, userRoles.roleId), eq(rolePermissions.apiId, input.apiId)))
    .where(
      and(
        eq(userRoles.workspaceId, ws),
        eq(userRoles.userId, input.userId),
        input.organizationId === null ? isNull(userRoles.organizationId) : eq(userRoles.organizationId, input.organizationId),
      ),
    );
  const held = new Set(roleRows.flatMap((r) => r.permissions));
  return [...identity, ...wanted.filter((p) => grant.permissions.includes(p) && held.has(p))];
}

describe("the scope rule", () => {
  it("gives the same scope in the rotation's expression and the code exchange's statement as the rule written out", async () => {
    const ctx = await context();
    const [ada, bob] = [await userId(ADA.email), await userId(BOB.email)];
    const pks = await Promise.all([SPA.client_id, WEB.client_id, M2M.client_id].map(async (c) => (await findClient(ctx, c))!.id));
    const requests = [
      [],
      ["openid"],
      ["read:things", "openid", "admin:things", "email", "write:things"],
      ["admin:things", "read:things"],
      ["write:things", "profile", "read:other", "offline_access"],
    ];
    let compared = 0;
    for (const requested of requests)
      for (const user of [ada, bob])
        for (const api of [await apiId(API), await apiId(OTHER_API), null])
          for (const organization of [null, await organizationId(ACME), await organizationId(GLOBEX)])
            for (const clientPk of pks) {
              const input = { requested, clientPk, userId: user, apiId: api, organizationId: organization };
              const [row] = await h.service.db
                .select({
                  scope: effectiveHumanScopeSql({
                    workspaceId: sql`${ws}::text`,
                    requested: sql`${JSON.stringify(requested)}::text::jsonb`,
                    clientPk: sql`${clientPk}::text`,
                    userId: sql`${user}::text`,
                    apiId: sql`${api}::text`,
                    organizationId: sql`${organization}::text`,
                  }),
                })
                .from(sql`(select 1) as one`);
              const expected = await expectedScope(input);
              expect(row.scope, JSON.stringify(input)).toEqual(expected);
              expect(await effectiveHumanScope(ctx, input), JSON.stringify(input)).toEqual(expected);
              compared++;
            }
    expect(compared).toBe(5 * 2 * 3 * 3 * 3);
  });
});
