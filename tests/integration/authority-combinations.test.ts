/**
 * The authority chain (lib/authority) over combinations of dead links: for each combination, real
 * rows are built and broken, and then
 * - the SQL form (each builder's `refusal`, read by a query) and the JS twin (`refusalOf` over the
 *   facts the same query loaded) must name the same first dead link;
 * - both must match the rule written out here independently (which links each combination kills);
 * - the endpoints must answer accordingly: the session check, UserInfo and introspection are
 *   active iff the chain holds, and the refresh grant refuses iff the family's chain is dead, with
 *   the token endpoint's own description of the first dead link.
 *
 * Every single dead link, every pair, the empty set, the full set and a seeded sample of larger
 * sets. Rows are written in bulk, one statement per table and per kind of breakage.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import {
  accessTokens,
  apis,
  clients,
  clientSecrets,
  consoleSessions,
  enterpriseConnections,
  grants,
  hostedSessions,
  organizationMembers,
  organizations,
  refreshTokens,
  users,
} from "../../db/schema";
import {
  chains,
  grantSource,
  LINKS,
  liveSql,
  nowValue,
  refusalOf,
  selectAccessTokenChain,
  selectConsoleSessionChain,
  selectGrantChain,
  selectHostedSessionChain,
  selectRefreshTokenChain,
  tokenRefusalOf,
  type Chain,
  type Link,
} from "../../lib/authority";
import { addMs, DAY, HOUR, MINUTE } from "../../lib/clock";
import { newId, randomToken, sha256Hex } from "../../lib/crypto";
import { subjectFor } from "../../lib/oauth/issue";
import { contextFor, resolveWorkspace } from "../../lib/server/router";
import { ADA, SPA, standardWorkspace } from "../helpers/fixtures";
import { humanTokens } from "../helpers/lifecycle";
import { basic, call, createHarness, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";

/** Each way a link can die, and the link it kills in each chain (undefined: not part of it). */
const BREAKAGES = {
  tokenRevoked: { human: "token", workload: "token" },
  tokenExpired: { human: "token", workload: "token" },
  grantRevoked: { human: "grant", grant: "grant" },
  grantIdleExpired: { human: "grant", grant: "grant" },
  grantAbsoluteExpired: { human: "grant", grant: "grant" },
  sessionEnded: { human: "session", grant: "session", session: "session" },
  sessionIdleExpired: { human: "session", grant: "session", session: "session" },
  sessionAbsoluteExpired: { human: "session", grant: "session", session: "session" },
  userDisabled: { human: "user", grant: "user", session: "user" },
  // Deleting the user deletes (foreign keys) its sessions, grants and refresh tokens; the access
  // token row stays (no foreign keys) and finds no grant.
  userDeleted: { human: "grant", grant: "gone", session: "gone" },
  clientDisabled: { human: "client", workload: "client", grant: "client", code: "client" },
  // The secret the grant was last used with, which also obtained the workload token.
  secretRevoked: { human: "credential", workload: "credential", grant: "credential" },
  // Merely expired: a human grant holds (a rotation's new secret is in use); a workload token dies.
  secretExpired: { workload: "credential" },
  apiDeactivated: { human: "api", workload: "api", grant: "api" },
  membershipRemoved: { human: "organization", grant: "organization", session: "organization" },
  organizationDeactivated: { human: "organization", grant: "organization", session: "organization" },
  connectionDisabled: { human: "connection", grant: "connection", session: "connection" },
} satisfies Record<string, Partial<Record<"human" | "workload" | "grant" | "session" | "code", Link | "gone">>>;

type Breakage = keyof typeof BREAKAGES;
const KINDS = Object.keys(BREAKAGES) as Breakage[];

/** The first dead link a combination should produce in one chain: "gone" when its row no longer exists. */
function expectedRefusal(combination: readonly Breakage[], chain: "human" | "workload" | "grant" | "session" | "code"): Link | "gone" | null {
  const killed = combination.map((b) => {
    const entry: Partial<Record<string, Link | "gone">> = BREAKAGES[b];
    // A hosted session bound to a client (code exchange) dies as the session does, and with the client.
    return chain === "code" ? (entry.code ?? entry.session) : entry[chain];
  });
  if (killed.includes("gone")) return "gone";
  return LINKS.find((link) => killed.includes(link)) ?? null;
}

/** Seeded (mulberry32), so a failure names a combination that reproduces. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Larger combinations drawn at random (seeded) beside the singles, the pairs and the full set. */
const SAMPLED = 48;

function combinations(): Breakage[][] {
  const all: Breakage[][] = [[]];
  for (const a of KINDS) all.push([a]);
  KINDS.forEach((a, i) => KINDS.slice(i + 1).forEach((b) => all.push([a, b])));
  all.push([...KINDS]);
  const next = random(20_261_121);
  for (let n = 0; n < SAMPLED; n++) {
    const size = 3 + Math.floor(next() * (KINDS.length - 3));
    const shuffled = [...KINDS];
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
    }
    const picked = shuffled.slice(0, size);
    all.push(KINDS.filter((k) => picked.includes(k)));
  }
  return all;
}

let h: Harness;
const ws = uniqueWorkspaceId("chain");

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

interface Scenario {
  combination: Breakage[];
  clientPk: string;
  clientId: string;
  /** The secret the grant was last used with and that obtained the workload token (broken by secret*). */
  grantSecretId: string;
  /** Another live secret: the client authenticates with it at introspection and refresh. */
  secret: string;
  userId: string;
  sessionId: string;
  grantId: string;
  organizationId: string;
  membershipId: string;
  connectionId: string;
  apiId: string;
  humanToken: string;
  workloadToken: string;
  refreshToken: string;
  consoleSessionId: string;
}

/** Builds one healthy chain per combination (bulk inserts), then breaks each as its combination says. */
async function build(list: Breakage[][]): Promise<Scenario[]> {
  const db = h.service.db;
  const now = h.clock.now();
  const ctx = contextFor(h.service, (await resolveWorkspace(h.service, ws))!);
  // A real hosted session, cloned: whatever columns a hosted session has, the clones have them.
  const signedIn = await humanTokens(h, ws, SPA, ADA, { scope: "openid" });
  const [{ sessionId: templateId }] = await db
    .select({ sessionId: accessTokens.sessionId })
    .from(accessTokens)
    .where(eq(accessTokens.tokenHash, sha256Hex(signedIn.access_token)));
  const [template] = await db.select().from(hostedSessions).where(eq(hostedSessions.id, templateId!));

  const scenarios: Scenario[] = list.map((combination, i) => ({
    combination,
    clientPk: newId(),
    clientId: `chain-${i}`,
    grantSecretId: newId(),
    secret: `secret-${randomToken(24)}`,
    userId: newId(),
    sessionId: newId(),
    grantId: newId(),
    organizationId: newId(),
    membershipId: newId(),
    connectionId: newId(),
    apiId: newId(),
    humanToken: `lka_${randomToken(32)}`,
    workloadToken: `lka_${randomToken(32)}`,
    refreshToken: `lkr_${randomToken(32)}`,
    consoleSessionId: newId(),
  }));
  const stamps = { createdAt: now, updatedAt: now };
  await db.insert(clients).values(
    scenarios.map((s) => ({ id: s.clientPk, workspaceId: ws, clientId: s.clientId, name: s.clientId, type: "WEB_CONFIDENTIAL" as const, identityScopes: ["openid"], ...stamps })),
  );
  await db.insert(clientSecrets).values(
    scenarios.flatMap((s) => [
      { id: s.grantSecretId, workspaceId: ws, clientPk: s.clientPk, secretHash: sha256Hex(`unused-${s.grantSecretId}`), createdAt: now, expiresAt: addMs(now, 90 * DAY) },
      { id: newId(), workspaceId: ws, clientPk: s.clientPk, secretHash: sha256Hex(s.secret), createdAt: now, expiresAt: addMs(now, 90 * DAY) },
    ]),
  );
  await db.insert(users).values(
    scenarios.map((s) => ({ id: s.userId, workspaceId: ws, email: `${s.userId}@chain.test`, emailNormalized: `${s.userId}@chain.test`, status: "active" as const, ...stamps })),
  );
  await db.insert(organizations).values(scenarios.map((s) => ({ id: s.organizationId, workspaceId: ws, slug: s.organizationId, name: "Org", ...stamps })));
  await db.insert(organizationMembers).values(
    scenarios.map((s) => ({ id: s.membershipId, workspaceId: ws, organizationId: s.organizationId, userId: s.userId, createdAt: now })),
  );
  await db.insert(enterpriseConnections).values(
    scenarios.map((s) => ({ id: s.connectionId, workspaceId: ws, organizationId: s.organizationId, name: "SSO", kind: "oidc" as const, ...stamps })),
  );
  await db.insert(apis).values(scenarios.map((s) => ({ id: s.apiId, workspaceId: ws, audience: `https://${s.apiId}.chain.test`, name: "API", ...stamps })));
  await db.insert(hostedSessions).values(
    scenarios.map((s) => ({
      ...template,
      id: s.sessionId,
      userId: s.userId,
      secretHash: sha256Hex(randomToken(32)),
      organizationId: s.organizationId,
      connectionId: s.connectionId,
      createdAt: now,
      lastSeenAt: now,
      idleExpiresAt: addMs(now, 12 * HOUR),
      absoluteExpiresAt: addMs(now, 7 * DAY),
      endedAt: null,
      endReason: null,
    })),
  );
  await db.insert(grants).values(
    scenarios.map((s) => ({
      id: s.grantId,
      workspaceId: ws,
      clientPk: s.clientPk,
      userId: s.userId,
      sessionId: s.sessionId,
      credentialId: s.grantSecretId,
      scope: ["openid"],
      apiId: s.apiId,
      subject: subjectFor(ctx, s.clientId, s.userId),
      createdAt: now,
      lastUsedAt: now,
      idleExpiresAt: addMs(now, 7 * DAY),
      absoluteExpiresAt: addMs(now, 30 * DAY),
    })),
  );
  await db.insert(refreshTokens).values(scenarios.map((s) => ({ tokenHash: sha256Hex(s.refreshToken), workspaceId: ws, grantId: s.grantId, createdAt: now })));
  const token = { workspaceId: ws, scope: ["openid"], createdAt: now, expiresAt: addMs(now, 5 * MINUTE) };
  await db.insert(accessTokens).values(
    scenarios.flatMap((s) => [
      { ...token, tokenHash: sha256Hex(s.humanToken), clientPk: s.clientPk, grantId: s.grantId, userId: s.userId, sessionId: s.sessionId, subject: subjectFor(ctx, s.clientId, s.userId), apiId: s.apiId },
      { ...token, tokenHash: sha256Hex(s.workloadToken), clientPk: s.clientPk, credentialId: s.grantSecretId, subject: s.clientId, apiId: s.apiId },
    ]),
  );
  await db.insert(consoleSessions).values(
    scenarios.map((s) => ({
      id: s.consoleSessionId,
      secretHash: sha256Hex(randomToken(32)),
      operatorUserId: s.userId,
      grantId: s.grantId,
      hostedSessionId: s.sessionId,
      createdAt: now,
      lastSeenAt: now,
      idleExpiresAt: addMs(now, 2 * HOUR),
      expiresAt: addMs(now, 12 * HOUR),
    })),
  );

  // Break: every time bound is set to exactly now (a bound is passed when it is reached).
  const having = (kind: Breakage) => scenarios.filter((s) => s.combination.includes(kind));
  const ids = <K extends keyof Scenario>(kind: Breakage, key: K) => having(kind).map((s) => s[key] as string);
  const tokenHashes = (kind: Breakage) => having(kind).flatMap((s) => [sha256Hex(s.humanToken), sha256Hex(s.workloadToken)]);
  const breaks: Record<Breakage, () => Promise<unknown>> = {
    tokenRevoked: () => db.update(accessTokens).set({ revokedAt: now }).where(inArray(accessTokens.tokenHash, tokenHashes("tokenRevoked"))),
    tokenExpired: () => db.update(accessTokens).set({ expiresAt: now }).where(inArray(accessTokens.tokenHash, tokenHashes("tokenExpired"))),
    grantRevoked: () => db.update(grants).set({ revokedAt: now, revokeReason: "test" }).where(inArray(grants.id, ids("grantRevoked", "grantId"))),
    grantIdleExpired: () => db.update(grants).set({ idleExpiresAt: now }).where(inArray(grants.id, ids("grantIdleExpired", "grantId"))),
    grantAbsoluteExpired: () => db.update(grants).set({ absoluteExpiresAt: now }).where(inArray(grants.id, ids("grantAbsoluteExpired", "grantId"))),
    sessionEnded: () => db.update(hostedSessions).set({ endedAt: now, endReason: "test" }).where(inArray(hostedSessions.id, ids("sessionEnded", "sessionId"))),
    sessionIdleExpired: () => db.update(hostedSessions).set({ idleExpiresAt: now }).where(inArray(hostedSessions.id, ids("sessionIdleExpired", "sessionId"))),
    sessionAbsoluteExpired: () => db.update(hostedSessions).set({ absoluteExpiresAt: now }).where(inArray(hostedSessions.id, ids("sessionAbsoluteExpired", "sessionId"))),
    userDisabled: () => db.update(users).set({ status: "disabled" }).where(inArray(users.id, ids("userDisabled", "userId"))),
    clientDisabled: () => db.update(clients).set({ active: false }).where(inArray(clients.id, ids("clientDisabled", "clientPk"))),
    secretRevoked: () => db.update(clientSecrets).set({ revokedAt: now }).where(inArray(clientSecrets.id, ids("secretRevoked", "grantSecretId"))),
    secretExpired: () => db.update(clientSecrets).set({ expiresAt: now }).where(inArray(clientSecrets.id, ids("secretExpired", "grantSecretId"))),
    apiDeactivated: () => db.update(apis).set({ active: false }).where(inArray(apis.id, ids("apiDeactivated", "apiId"))),
    membershipRemoved: () => db.delete(organizationMembers).where(inArray(organizationMembers.id, ids("membershipRemoved", "membershipId"))),
    organizationDeactivated: () => db.update(organizations).set({ active: false }).where(inArray(organizations.id, ids("organizationDeactivated", "organizationId"))),
    connectionDisabled: () => db.update(enterpriseConnections).set({ active: false }).where(inArray(enterpriseConnections.id, ids("connectionDisabled", "connectionId"))),
    // Last: it takes the rows the others break with it.
    userDeleted: () => db.delete(users).where(inArray(users.id, ids("userDeleted", "userId"))),
  };
  for (const [kind, apply] of Object.entries(breaks)) if (having(kind as Breakage).length > 0) await apply();
  return scenarios;
}

const label = (s: Scenario) => `[${s.combination.join(", ") || "nothing dead"}]`;

/** SQL and JS agree on each row, and both say what the combination should. */
function expectAgreement(s: Scenario, chain: "human" | "workload" | "grant" | "session" | "code", row: { refusal: Link | null } | undefined, js: (row: never) => Link | null) {
  const expected = expectedRefusal(s.combination, chain);
  if (expected === "gone") {
    expect(row, `${label(s)} ${chain}: no row`).toBeUndefined();
    return;
  }
  expect(row, `${label(s)} ${chain}: a row`).toBeDefined();
  expect(js(row as never), `${label(s)} ${chain}: JS twin and SQL agree`).toBe(row!.refusal);
  expect(row!.refusal, `${label(s)} ${chain}: as the rule says`).toBe(expected);
}

describe("the authority chain over combinations of dead links", () => {
  let scenarios: Scenario[] = [];

  beforeAll(async () => {
    scenarios = await build(combinations());
  });

  it("covers every single dead link, every pair, the full set and a seeded sample", () => {
    const n = KINDS.length;
    expect(scenarios.length).toBe(1 + n + (n * (n - 1)) / 2 + 1 + SAMPLED);
  });

  it("gives the same first dead link in SQL and in the JS twin, for every reader's chain, as the rule written out", async () => {
    const db = h.service.db;
    const now = h.clock.now();
    const at = nowValue(now);
    const byHash = async (tokens: string[]) =>
      new Map(
        (await selectAccessTokenChain(db, at, { tokenHash: accessTokens.tokenHash }).where(inArray(accessTokens.tokenHash, tokens.map(sha256Hex)))).map((r) => [r.tokenHash, r]),
      );
    const human = await byHash(scenarios.map((s) => s.humanToken));
    const workload = await byHash(scenarios.map((s) => s.workloadToken));
    const refresh = new Map(
      (await selectRefreshTokenChain(db, at, { tokenHash: refreshTokens.tokenHash }).where(inArray(refreshTokens.tokenHash, scenarios.map((s) => sha256Hex(s.refreshToken))))).map((r) => [
        r.tokenHash,
        r,
      ]),
    );
    const grantIds = scenarios.map((s) => s.grantId);
    // The composed predicate (liveSql) says live exactly when the CASE names no dead link.
    const live = sql<boolean>`${liveSql(chains.grant, grantSource, at)}`.as("live");
    const grantRows = new Map((await selectGrantChain(db, at, { id: grants.id, live }).where(inArray(grants.id, grantIds))).map((r) => [r.id, r]));
    for (const row of grantRows.values()) expect(row.live).toBe(row.refusal === null);
    const grantRecords = new Map((await selectGrantChain(db, at, { id: grants.id }, chains.grantRecord).where(inArray(grants.id, grantIds))).map((r) => [r.id, r]));
    const consoleRows = new Map(
      (await selectConsoleSessionChain(db, at, { id: consoleSessions.id }).where(inArray(consoleSessions.id, scenarios.map((s) => s.consoleSessionId)))).map((r) => [r.id, r]),
    );
    const sessionIds = scenarios.map((s) => s.sessionId);
    const sessionRows = new Map((await selectHostedSessionChain(db, at, { id: hostedSessions.id }).where(inArray(hostedSessions.id, sessionIds))).map((r) => [r.id, r]));
    const codeRows = new Map<string, { refusal: Link | null }>();
    for (const s of scenarios) {
      const [row] = await selectHostedSessionChain(db, at, { id: hostedSessions.id }, s.clientPk).where(eq(hostedSessions.id, s.sessionId));
      if (row) codeRows.set(row.id, row);
    }
    const twin = (chain: Chain) => (row: never) => refusalOf(chain, row, now);
    const tokenTwin = (row: never) => tokenRefusalOf(row, now);
    for (const s of scenarios) {
      expectAgreement(s, "human", human.get(sha256Hex(s.humanToken)), tokenTwin);
      expectAgreement(s, "workload", workload.get(sha256Hex(s.workloadToken)), tokenTwin);
      expectAgreement(s, "grant", refresh.get(sha256Hex(s.refreshToken)), twin(chains.grant));
      expectAgreement(s, "grant", grantRows.get(s.grantId), twin(chains.grant));
      expectAgreement(s, "grant", consoleRows.get(s.consoleSessionId), twin(chains.grant));
      expectAgreement(s, "session", sessionRows.get(s.sessionId), twin(chains.hostedSession));
      expectAgreement(s, "code", codeRows.get(s.sessionId), twin(chains.codeExchange));
      // The console listing judges only the grant's own state and its session's.
      const record = grantRecords.get(s.grantId);
      if (record) {
        const own = expectedRefusal(
          s.combination.filter((b) => b.startsWith("grant") || b.startsWith("session")),
          "grant",
        );
        expect(record.refusal, `${label(s)} grant record: SQL`).toBe(own);
        expect(refusalOf(chains.grantRecord, record, now), `${label(s)} grant record: JS twin`).toBe(own);
      }
    }
  });

  it("answers at the session check, UserInfo, introspection and the refresh grant exactly as the chain says, and a refused refresh issues nothing", async () => {
    const bearer = (path: string, token: string) => call(h, `/t/${ws}${path}`, { headers: { authorization: `Bearer ${token}` } });
    for (const s of scenarios) {
      const auth = basic(s.clientId, s.secret);
      const humanLive = expectedRefusal(s.combination, "human") === null;
      const workloadLive = expectedRefusal(s.combination, "workload") === null;
      const grantRefusal = expectedRefusal(s.combination, "grant");
      const clientDisabled = s.combination.includes("clientDisabled");

      const check = await bearer("/oidc/session", s.humanToken);
      expect(check.status, `${label(s)} session check`).toBe(humanLive ? 200 : 401);
      if (humanLive) expect((await check.json()).active).toBe(true);
      expect((await bearer("/oidc/userinfo", s.humanToken)).status, `${label(s)} UserInfo`).toBe(humanLive ? 200 : 401);

      const introspect = async (token: string, hint?: string) => {
        const res = await call(h, `/t/${ws}/oauth2/introspect`, { form: { token, ...(hint ? { token_type_hint: hint } : {}) }, headers: { authorization: auth } });
        // A disabled client cannot authenticate: it learns nothing, which is not "active" either.
        if (clientDisabled) {
          expect(res.status, `${label(s)} introspection by a disabled client`).toBe(401);
          return false;
        }
        expect(res.status).toBe(200);
        return (await res.json()).active === true;
      };
      expect(await introspect(s.humanToken), `${label(s)} introspection of the access token`).toBe(humanLive);
      expect(await introspect(s.workloadToken), `${label(s)} introspection of the workload token`).toBe(workloadLive);
      expect(await introspect(s.refreshToken, "refresh_token"), `${label(s)} introspection of the refresh token`).toBe(grantRefusal === null);

      const refreshed = await call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: s.refreshToken }, headers: { authorization: auth } });
      const body = await refreshed.json();
      if (clientDisabled) {
        expect([refreshed.status, body.error], `${label(s)} refresh by a disabled client`).toEqual([401, "invalid_client"]);
      } else if (grantRefusal === null) {
        expect(refreshed.status, `${label(s)} refresh: ${JSON.stringify(body)}`).toBe(200);
      } else {
        // A revoked or vanished family is not rotatable at all; otherwise the first dead link names the refusal.
        const description =
          s.combination.includes("grantRevoked") || grantRefusal === "gone"
            ? "The refresh token is invalid, expired or revoked"
            : grantRefusal === "grant"
              ? "The refresh token has expired"
              : grantRefusal === "credential"
                ? "The client credential behind this authorization was revoked"
                : "The session or authorization behind this refresh token has ended";
        expect([refreshed.status, body], `${label(s)} refresh`).toEqual([400, { error: "invalid_grant", error_description: description }]);
      }
    }

    // A refused refresh issued nothing: only the live families gained an access token.
    const counts = await h.service.db
      .select({ grantId: accessTokens.grantId, n: sql<number>`count(*)::int` })
      .from(accessTokens)
      .where(and(eq(accessTokens.workspaceId, ws), inArray(accessTokens.grantId, scenarios.map((s) => s.grantId))))
      .groupBy(accessTokens.grantId);
    const byGrant = new Map(counts.map((c) => [c.grantId, c.n]));
    for (const s of scenarios) {
      const issued = expectedRefusal(s.combination, "grant") === null;
      expect(byGrant.get(s.grantId) ?? 0, `${label(s)} access tokens of the family`).toBe(issued ? 2 : 1);
    }
  }, 180_000);
});
