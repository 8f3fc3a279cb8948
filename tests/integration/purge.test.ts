import { beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { accessTokens } from "../../db/schema";
import { sha256Hex } from "../../lib/crypto";
import { MINUTE } from "../../lib/clock";
import { purgeRetained } from "../../lib/features/purge";
import { PURGE_GRACE_MS } from "../../lib/surfaces/retention";
import { basic, call, createHarness, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { M2M, standardWorkspace } from "../helpers/fixtures";
import { insertWorkloadToken } from "../helpers/lifecycle";

let h: Harness;
const ws = uniqueWorkspaceId("purge");

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

const stored = async (token: string) => (await h.service.db.select({ hash: accessTokens.tokenHash }).from(accessTokens).where(eq(accessTokens.tokenHash, sha256Hex(token)))).length === 1;

/** The access tokens' purge (the tokens, and the deny list of sealed workload tokens) of this file's workspace: how many rows it deleted. */
const purgeExpiredAccessTokens = async () => {
  const deleted = await purgeRetained(h.service, { workspaceId: ws, names: ["access_tokens", "revoked_workload_tokens"] });
  return deleted.access_tokens! + deleted.revoked_workload_tokens!;
};

const introspect = async (token: string) =>
  (await call(h, `/t/${ws}/oauth2/introspect`, { method: "POST", headers: { authorization: basic(M2M.client_id, M2M.secret) }, form: { token } })).json();

describe("expired access token purge", () => {
  it("deletes tokens expired longer than the grace period and keeps the rest, answering the same before and after", async () => {
    // Expires in 5 minutes; then the clock moves past expiry + grace for it but not for the others.
    const old = await insertWorkloadToken(h, ws, M2M.client_id);
    h.clock.advance(5 * MINUTE + PURGE_GRACE_MS + 1);
    const recentlyExpired = await insertWorkloadToken(h, ws, M2M.client_id, { ttlMs: -MINUTE });
    const live = await insertWorkloadToken(h, ws, M2M.client_id);

    expect(await introspect(old.token)).toEqual({ active: false });
    expect(await purgeExpiredAccessTokens()).toBe(1);

    expect(await stored(old.token)).toBe(false);
    expect(await stored(recentlyExpired.token)).toBe(true);
    expect(await stored(live.token)).toBe(true);
    // An expired token and a purged one answer alike; a live one is untouched.
    expect(await introspect(old.token)).toEqual({ active: false });
    expect(await introspect(recentlyExpired.token)).toEqual({ active: false });
    expect((await introspect(live.token)).active).toBe(true);
  });

  it("refuses a purge by a name no feature declares, rather than purging nothing", async () => {
    await expect(purgeRetained(h.service, { workspaceId: ws, names: ["access_token"] })).rejects.toThrow(/access_token/);
  });

  it("deletes nothing when nothing has expired past the grace period", async () => {
    await insertWorkloadToken(h, ws, M2M.client_id);
    expect(await purgeExpiredAccessTokens()).toBe(0);
  });
});

describe("expired sign-in rows purge", () => {
  it("deletes pending sign-ins, authorization codes, factor challenges, unfinished authenticator enrolments, portal sessions and accepted SAML assertion IDs an hour past expiry, and outbox messages after a week; keeps the rest", async () => {
    const { authorizationTransactions, factorChallenges, mailOutbox, clients } = await import("../../db/schema");
    const { OUTBOX_RETENTION_MS } = await import("../../lib/authn/email/retention");
    const [client] = await h.service.db.select({ id: clients.id }).from(clients).where(eq(clients.workspaceId, ws)).limit(1);
    const now = () => h.clock.now();
    const tx = (id: string, expiresAt: Date) => ({
      id, workspaceId: ws, clientPk: client.id, redirectUri: "https://x.test/cb", scope: ["openid"], state: "s", nonce: "n", codeChallenge: "c",
      browserBindingHash: "h", createdAt: now(), expiresAt,
    });
    const challenge = (id: string, expiresAt: Date) => ({ id, workspaceId: ws, kind: "email_otp" as const, purpose: "sign_in", bindingId: "b", secret: "s", createdAt: now(), expiresAt });
    const at = (ms: number) => new Date(now().getTime() + ms);
    await h.service.db.insert(authorizationTransactions).values([tx("tx-old", at(-PURGE_GRACE_MS - 1)), tx("tx-recent", at(-MINUTE)), tx("tx-live", at(MINUTE))]);
    await h.service.db.insert(factorChallenges).values([challenge("ch-old", at(-PURGE_GRACE_MS - 1)), challenge("ch-recent", at(-MINUTE)), challenge("ch-live", at(MINUTE))]);
    const mail = (id: string, createdAt: Date) => ({ id, workspaceId: ws, recipient: "a@x.test", subject: "s", text: "t", html: "h", createdAt });
    await h.service.db.insert(mailOutbox).values([mail("m-old", at(-OUTBOX_RETENTION_MS - 1)), mail("m-new", at(-MINUTE))]);

    const { totpFactors, users } = await import("../../db/schema");
    const [user] = await h.service.db.select({ id: users.id }).from(users).where(eq(users.workspaceId, ws)).limit(1);
    const totp = (id: string, createdAt: Date, confirmedAt: Date | null) => ({ id, workspaceId: ws, userId: user.id, secretEncrypted: "x", name: "App", createdAt, confirmedAt });
    await h.service.db.insert(totpFactors).values([
      totp("t-unfinished-old", at(-10 * MINUTE - PURGE_GRACE_MS - 1), null),
      totp("t-unfinished-recent", at(-MINUTE), null),
      totp("t-confirmed-old", at(-10 * MINUTE - PURGE_GRACE_MS - 1), at(-10 * MINUTE - PURGE_GRACE_MS)),
    ]);

    const { accountSecurityPortalSessions, hostedSessions } = await import("../../db/schema");
    const { signIn } = await import("../helpers/harness");
    const { ADA, SPA } = await import("../helpers/fixtures");
    await signIn(h, ws, { ...SPA, ...ADA });
    const [session] = await h.service.db.select({ id: hostedSessions.id, userId: hostedSessions.userId }).from(hostedSessions).where(eq(hostedSessions.workspaceId, ws)).limit(1);
    const portal = (id: string, expiresAt: Date) => ({ id, workspaceId: ws, userId: session.userId, sessionId: session.id, clientPk: client.id, returnUri: "https://x.test/", secretHash: "h", createdAt: now(), expiresAt });
    await h.service.db.insert(accountSecurityPortalSessions).values([portal("p-old", at(-PURGE_GRACE_MS - 1)), portal("p-live", at(MINUTE))]);

    const { samlAssertionReplays, enterpriseConnections, organizations } = await import("../../db/schema");
    await h.service.db.insert(organizations).values({ id: `org-${ws}`, workspaceId: ws, slug: "purge", name: "Purge", createdAt: now(), updatedAt: now() });
    await h.service.db.insert(enterpriseConnections).values({ id: `saml-${ws}`, workspaceId: ws, organizationId: `org-${ws}`, name: "SAML", kind: "saml", createdAt: now(), updatedAt: now() });
    const assertion = (assertionId: string, expiresAt: Date) => ({ workspaceId: ws, connectionId: `saml-${ws}`, assertionId, expiresAt });
    await h.service.db.insert(samlAssertionReplays).values([assertion("_old", at(-PURGE_GRACE_MS - 1)), assertion("_live", at(MINUTE))]);

    const { authorizationCodes } = await import("../../db/schema");
    const code = (codeHash: string, expiresAt: Date) => ({
      codeHash, workspaceId: ws, clientPk: client.id, userId: session.userId, sessionId: session.id, redirectUri: "https://x.test/cb", scope: ["openid"], nonce: "n", codeChallenge: "c",
      createdAt: now(), expiresAt,
    });
    await h.service.db.insert(authorizationCodes).values([code(`c-old-${ws}`, at(-PURGE_GRACE_MS - 1)), code(`c-recent-${ws}`, at(-MINUTE)), code(`c-live-${ws}`, at(MINUTE))]);
    const codesBefore = (await h.service.db.select({ id: authorizationCodes.codeHash }).from(authorizationCodes).where(eq(authorizationCodes.workspaceId, ws))).map((r) => r.id);

    const signInRows = ["authorization_transactions", "authorization_codes", "factor_challenges", "totp_enrolments", "account_security_portal_sessions", "saml_assertion_replays", "mail_outbox"];
    expect(await purgeRetained(h.service, { workspaceId: ws, names: signInRows })).toEqual({
      authorization_transactions: 1, authorization_codes: 1, factor_challenges: 1, totp_enrolments: 1, account_security_portal_sessions: 1, saml_assertion_replays: 1, mail_outbox: 1,
    });
    // The sign-in's own code (expired a minute after it was issued, an hour not yet past) stays with the recent and the live one.
    expect((await h.service.db.select({ id: authorizationCodes.codeHash }).from(authorizationCodes).where(eq(authorizationCodes.workspaceId, ws))).map((r) => r.id).sort()).toEqual(
      codesBefore.filter((id) => id !== `c-old-${ws}`).sort(),
    );
    expect((await h.service.db.select({ id: samlAssertionReplays.assertionId }).from(samlAssertionReplays).where(eq(samlAssertionReplays.workspaceId, ws))).map((r) => r.id)).toEqual(["_live"]);
    expect((await h.service.db.select({ id: totpFactors.id }).from(totpFactors).where(eq(totpFactors.workspaceId, ws))).map((r) => r.id).sort()).toEqual(["t-confirmed-old", "t-unfinished-recent"]);
    const ids = async (table: typeof authorizationTransactions | typeof factorChallenges | typeof mailOutbox) =>
      (await h.service.db.select({ id: table.id }).from(table).where(eq(table.workspaceId, ws))).map((r) => r.id).sort();
    // (The sign-in above left its own live transaction and passkey challenge.)
    expect((await ids(authorizationTransactions)).filter((id) => id.startsWith("tx-"))).toEqual(["tx-live", "tx-recent"]);
    expect((await ids(factorChallenges)).filter((id) => id.startsWith("ch-"))).toEqual(["ch-live", "ch-recent"]);
    expect(await ids(mailOutbox)).toEqual(["m-new"]);
    expect((await h.service.db.select({ id: accountSecurityPortalSessions.id }).from(accountSecurityPortalSessions).where(eq(accountSecurityPortalSessions.workspaceId, ws))).map((r) => r.id)).toEqual(["p-live"]);
  });
});

describe("ended grants and hosted sessions purge", () => {
  it("deletes grants and sessions over for 30 days with what hangs on them, and keeps everything more recent or live", async () => {
    const { grants, hostedSessions, refreshTokens } = await import("../../db/schema");
    const { ENDED_RETENTION_MS } = await import("../../lib/surfaces/retention");
    const purgeEndedSessions = () => purgeRetained(h.service, { workspaceId: purgeWs, names: ["grants", "hosted_sessions", "account_security_launches"] });
    const { SESSION_ABSOLUTE_MS } = await import("../../lib/authn/hosted-session");
    const { signIn, exchangeCode, Jar } = await import("../helpers/harness");
    const { ADA, SPA } = await import("../helpers/fixtures");
    const { and, inArray } = await import("drizzle-orm");
    // An ended session is this browser's proof for the guessing limits until the cookie's lifetime is over: kept at least that long.
    expect(ENDED_RETENTION_MS).toBeGreaterThanOrEqual(SESSION_ABSOLUTE_MS);
    const purgeWs = uniqueWorkspaceId("purge-ended");
    await seed(h, standardWorkspace(purgeWs));
    const grantsNow = async () => h.service.db.select({ grant: grants.id, session: grants.sessionId }).from(grants).where(eq(grants.workspaceId, purgeWs));
    /** A new sign-in in a new browser and its code exchanged: a hosted session and its grant. */
    const family = async () => {
      const before = new Set((await grantsNow()).map((g) => g.grant));
      const { callback, verifier } = await signIn(h, purgeWs, { ...SPA, ...ADA }, new Jar());
      const res = await exchangeCode(h, purgeWs, { code: callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier, client_id: SPA.client_id });
      expect(res.status).toBe(200);
      const added = (await grantsNow()).filter((g) => !before.has(g.grant));
      expect(added).toHaveLength(1);
      return added[0]!;
    };
    const [endedLongAgo, endedRecently, revokedGrantLongAgo, live] = [await family(), await family(), await family(), await family()];
    const ago = (ms: number) => new Date(h.clock.now().getTime() - ms);
    const DAY_MS = 24 * 60 * MINUTE;
    await h.service.db.update(hostedSessions).set({ endedAt: ago(31 * DAY_MS), endReason: "signed_out" }).where(eq(hostedSessions.id, endedLongAgo.session));
    await h.service.db.update(hostedSessions).set({ endedAt: ago(29 * DAY_MS), endReason: "signed_out" }).where(eq(hostedSessions.id, endedRecently.session));
    await h.service.db.update(grants).set({ revokedAt: ago(31 * DAY_MS), revokeReason: "revoked" }).where(eq(grants.id, revokedGrantLongAgo.grant));
    // A grant past its absolute bound for 30 days, on the live session: over too.
    const expired = await family();
    await h.service.db.update(grants).set({ absoluteExpiresAt: ago(ENDED_RETENTION_MS + 1) }).where(eq(grants.id, expired.grant));

    const { accountSecurityLaunches, clients } = await import("../../db/schema");
    const [spa] = await h.service.db.select({ id: clients.id }).from(clients).where(and(eq(clients.workspaceId, purgeWs), eq(clients.clientId, SPA.client_id)));
    const [userRow] = await h.service.db.select({ user: hostedSessions.userId }).from(hostedSessions).where(eq(hostedSessions.id, live.session));
    const launch = (id: string, expiresAt: Date) => ({
      id: `${id}-${purgeWs}`, workspaceId: purgeWs, clientPk: spa!.id, userId: userRow!.user, sessionId: live.session, grantId: live.grant,
      stateHash: `${id}-state`, callbackState: "s", intent: "account_security", createdAt: expiresAt, expiresAt,
    });
    await h.service.db.insert(accountSecurityLaunches).values([launch("launch-old", ago(ENDED_RETENTION_MS + 1)), launch("launch-recent", ago(29 * DAY_MS))]);

    expect(await purgeEndedSessions()).toEqual({ grants: 2, hosted_sessions: 1, account_security_launches: 1 });
    expect((await h.service.db.select({ id: accountSecurityLaunches.id }).from(accountSecurityLaunches).where(eq(accountSecurityLaunches.workspaceId, purgeWs))).map((r) => r.id)).toEqual([`launch-recent-${purgeWs}`]);
    const grantIds = (await h.service.db.select({ id: grants.id }).from(grants).where(eq(grants.workspaceId, purgeWs))).map((r) => r.id).sort();
    expect(grantIds).toEqual([endedRecently.grant, live.grant].sort());
    const sessionIds = (await h.service.db.select({ id: hostedSessions.id }).from(hostedSessions).where(eq(hostedSessions.workspaceId, purgeWs))).map((r) => r.id);
    expect(sessionIds).not.toContain(endedLongAgo.session);
    expect(sessionIds).toEqual(expect.arrayContaining([endedRecently.session, revokedGrantLongAgo.session, live.session, expired.session]));
    // The deleted families' refresh tokens went with them.
    const orphans = await h.service.db
      .select({ grant: refreshTokens.grantId })
      .from(refreshTokens)
      .where(and(eq(refreshTokens.workspaceId, purgeWs), inArray(refreshTokens.grantId, [endedLongAgo.grant, revokedGrantLongAgo.grant, expired.grant])));
    expect(orphans).toEqual([]);
    // Nothing else is over.
    expect(await purgeEndedSessions()).toEqual({ grants: 0, hosted_sessions: 0, account_security_launches: 0 });
  });
});

describe("audit log retention", () => {
  it("keeps every event by default; with AUDIT_RETENTION_DAYS, deletes the events older than that and no others", async () => {
    const { auditEvents } = await import("../../db/schema");
        const auditWs = uniqueWorkspaceId("purge-audit");
    await seed(h, standardWorkspace(auditWs));
    const DAY_MS = 24 * 60 * MINUTE;
    const event = (id: string, daysAgo: number) => ({ id: `${id}-${auditWs}`, workspaceId: auditWs, type: "session.logout", createdAt: new Date(h.clock.now().getTime() - daysAgo * DAY_MS) });
    await h.service.db.insert(auditEvents).values([event("a-old", 91), event("a-recent", 89)]);
    const ids = async () => (await h.service.db.select({ id: auditEvents.id }).from(auditEvents).where(eq(auditEvents.workspaceId, auditWs))).map((r) => r.id).filter((id) => id.startsWith("a-")).sort();
    expect(await purgeRetained(h.service, { workspaceId: auditWs, names: ["audit_events"] })).toEqual({ audit_events: 0 });
    expect(await ids()).toEqual([`a-old-${auditWs}`, `a-recent-${auditWs}`]);
    const kept90Days = { ...h.service, config: { ...h.service.config, auditRetentionDays: 90 } };
    expect(await purgeRetained(kept90Days, { workspaceId: auditWs, names: ["audit_events"] })).toEqual({ audit_events: 1 });
    expect(await ids()).toEqual([`a-recent-${auditWs}`]);
  });
});

describe("operator invitations retention", () => {
  it("deletes invitations accepted, revoked or expired 30 days ago, and keeps pending ones and those that ended since", async () => {
    const { operatorInvitations } = await import("../../db/schema");
    const { ENDED_RETENTION_MS } = await import("../../lib/surfaces/retention");
    const purgeEndedInvitations = async () => (await purgeRetained(h.service, { workspaceId: invitationWs, names: ["operator_invitations"] })).operator_invitations;
    const invitationWs = uniqueWorkspaceId("purge-invitations");
    await seed(h, standardWorkspace(invitationWs));
    const ago = (ms: number) => new Date(h.clock.now().getTime() - ms);
    const over = ENDED_RETENTION_MS + 1;
    const recently = ENDED_RETENTION_MS - MINUTE;
    const invitation = (id: string, ended: { expiresAt: Date; acceptedAt?: Date; revokedAt?: Date }) => ({
      id: `${id}-${invitationWs}`, workspaceId: invitationWs, email: `${id}@example.test`, emailNormalized: `${id}@example.test`, role: "viewer" as const,
      tokenHash: `${id}-${invitationWs}`, createdAt: ago(ENDED_RETENTION_MS * 2), acceptedAt: null, revokedAt: null, ...ended,
    });
    const later = new Date(h.clock.now().getTime() + 7 * 24 * 60 * MINUTE);
    await h.service.db.insert(operatorInvitations).values([
      invitation("accepted-old", { expiresAt: later, acceptedAt: ago(over) }),
      invitation("revoked-old", { expiresAt: later, revokedAt: ago(over) }),
      invitation("expired-old", { expiresAt: ago(over) }),
      invitation("accepted-recent", { expiresAt: later, acceptedAt: ago(recently) }),
      invitation("expired-recent", { expiresAt: ago(recently) }),
      invitation("pending", { expiresAt: later }),
    ]);
    const ids = async () =>
      (await h.service.db.select({ id: operatorInvitations.id }).from(operatorInvitations).where(eq(operatorInvitations.workspaceId, invitationWs))).map((r) => r.id.replace(`-${invitationWs}`, "")).sort();
    expect(await purgeEndedInvitations()).toBe(3);
    expect(await ids()).toEqual(["accepted-recent", "expired-recent", "pending"]);
    expect(await purgeEndedInvitations()).toBe(0);
  });
});

describe("one instance purges at a time", () => {
  it("of 20 instances taking the purge at once, exactly one gets it; it is free again once the lease has run out", async () => {
    const { PURGE_INTERVAL_MS, PURGE_LEASE_MS, takePurgeLease } = await import("../../lib/features/purge");
    expect(PURGE_LEASE_MS).toBeLessThan(PURGE_INTERVAL_MS);
    const race = () => Promise.all(Array.from({ length: 20 }, (_, i) => takePurgeLease(h.service, `instance-${i}`)));
    // Far ahead of any earlier lease, on this run's shared database.
    h.clock.advance(PURGE_LEASE_MS * 10);
    expect((await race()).filter(Boolean)).toHaveLength(1);
    expect((await race()).filter(Boolean)).toHaveLength(0);
    h.clock.advance(PURGE_LEASE_MS - 1);
    expect((await race()).filter(Boolean)).toHaveLength(0);
    h.clock.advance(2);
    expect((await race()).filter(Boolean)).toHaveLength(1);
  });

  it("a run purges every kind of row past its retention on the instance holding the lease, and another instance's run purges nothing", async () => {
    const { openFreshEmbeddedDatabase } = await import("../setup/test-database");
    const { createService } = await import("../../lib/service");
    const { auditEvents, operatorInvitations, rateLimits, factorChallenges } = await import("../../db/schema");
    const { runPurge } = await import("../../lib/features/purge");
    const { ENDED_RETENTION_MS } = await import("../../lib/surfaces/retention");
    const own = await openFreshEmbeddedDatabase();
    const service = createService(own.db, { ...h.service.config, auditRetentionDays: 90 }, h.clock);
    const ownHarness: Harness = { service, clock: h.clock, handle: own };
    const runWs = uniqueWorkspaceId("purge-run");
    await seed(ownHarness, standardWorkspace(runWs));
    const ago = (ms: number) => new Date(h.clock.now().getTime() - ms);
    const DAY_MS = 24 * 60 * MINUTE;
    const plant = async (suffix: string, age: number) => {
      await own.db.insert(auditEvents).values({ id: `audit-${suffix}`, workspaceId: runWs, type: "session.logout", createdAt: ago(age * 91 * DAY_MS) });
      await own.db.insert(operatorInvitations).values({
        id: `inv-${suffix}`, workspaceId: runWs, email: "x@example.test", emailNormalized: "x@example.test", role: "viewer", tokenHash: `inv-${suffix}`,
        createdAt: ago(age * (ENDED_RETENTION_MS + DAY_MS) + DAY_MS), expiresAt: ago(age * (ENDED_RETENTION_MS + DAY_MS)),
      });
      await own.db.insert(rateLimits).values({ key: `rl-${suffix}`, windowStart: ago(age * 2 * 60 * MINUTE), count: 1 });
      await own.db.insert(factorChallenges).values({ id: `ch-${suffix}`, workspaceId: runWs, kind: "email_otp", purpose: "sign_in", bindingId: "b", secret: "s", createdAt: ago(age * 2 * 60 * MINUTE), expiresAt: ago(age * 2 * 60 * MINUTE - MINUTE) });
    };
    await plant("old", 1);
    await plant("new", 0);
    const left = async () => [
      ...(await own.db.select({ id: auditEvents.id }).from(auditEvents).where(eq(auditEvents.workspaceId, runWs))).map((r) => r.id).filter((id) => id.startsWith("audit-")),
      ...(await own.db.select({ id: operatorInvitations.id }).from(operatorInvitations)).map((r) => r.id),
      ...(await own.db.select({ id: rateLimits.key }).from(rateLimits)).map((r) => r.id),
      ...(await own.db.select({ id: factorChallenges.id }).from(factorChallenges)).map((r) => r.id),
    ].sort();

    expect(await runPurge(service, "instance-a")).toBe(true);
    expect(await left()).toEqual(["audit-new", "ch-new", "inv-new", "rl-new"]);
    // Instance b, within a's lease: nothing is purged, not even what has meanwhile grown old.
    await plant("old-2", 1);
    expect(await runPurge(service, "instance-b")).toBe(false);
    expect(await left()).toContain("audit-old-2");
  });
});
