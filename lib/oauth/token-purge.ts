import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { and, eq, inArray, isNull, lt, or, type SQL } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import {
  accessTokens,
  auditEvents,
  accountSecurityLaunches,
  accountSecurityPortalSessions,
  authorizationCodes,
  authorizationTransactions,
  factorChallenges,
  grants,
  hostedSessions,
  mailOutbox,
  operatorInvitations,
  revokedWorkloadTokens,
  samlAssertionReplays,
  serviceSettings,
  totpFactors,
} from "../../db/schema";
import type { Service } from "../service";
import { DAY, HOUR, MINUTE } from "../clock";
import { purgeEndedRateLimits } from "../limits/rate-limit";

/**
 * Expired access tokens are deleted in the background. An access token lives 5 minutes, and a
 * token that has expired answers exactly like an unknown one everywhere (introspection
 * `active: false`, 401 from UserInfo, the session check and the permission check, 200 from
 * revocation), so its row only costs: without this the hottest table and its indexes grow by
 * every token ever issued, and every insert and lookup with them.
 *
 * Rows are kept for an hour past expiry (support and audit questions about a recent token can
 * still be answered from the table), deleted in batches so no statement holds many row locks,
 * and rows another instance is deleting are skipped rather than waited for.
 */
export const PURGE_GRACE_MS = HOUR;
export const PURGE_INTERVAL_MS = 5 * MINUTE;
const BATCH = 5_000;
/** Per run; the rest waits for the next run rather than keeping the database busy. */
const MAX_BATCHES = 20;

/**
 * Deletes the rows of `table` that `where` selects, BATCH at a time (no statement holds many row
 * locks) and at most MAX_BATCHES batches per run, skipping rows another instance is deleting.
 * Returns how many.
 */
async function deleteInBatches(db: Database, table: PgTable, key: PgColumn, where: SQL | undefined): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const batch = db.select({ key }).from(table).where(where).limit(BATCH).for("update", { skipLocked: true });
    // `where` again: a key shared with a row it does not select (a composite key's part) keeps that row.
    const deleted = await db.delete(table).where(and(where, inArray(key, batch))).returning({ key });
    total += deleted.length;
    if (deleted.length < BATCH) break;
  }
  return total;
}

/** Of one workspace when given (tests share one database between files), else of every workspace. */
const inWorkspace = (column: PgColumn, workspaceId: string | undefined) => (workspaceId === undefined ? undefined : eq(column, workspaceId));

/** The rows whose `time` is before `cutoff`, of one workspace when given. */
const before = (time: PgColumn, cutoff: Date, workspace: PgColumn, workspaceId: string | undefined) => and(lt(time, cutoff), inWorkspace(workspace, workspaceId));

/**
 * Deletes the expired rows, and the deny-list entries of sealed workload tokens that have expired
 * (of one workspace when given: tests share one database between files). Returns how many.
 */
export async function purgeExpiredAccessTokens(service: Service, options: { workspaceId?: string } = {}): Promise<number> {
  const cutoff = new Date(service.clock.now().getTime() - PURGE_GRACE_MS);
  const ws = options.workspaceId;
  const total = await deleteInBatches(service.db, accessTokens, accessTokens.tokenHash, before(accessTokens.expiresAt, cutoff, accessTokens.workspaceId, ws));
  // The deny list of sealed workload tokens: an entry is needed only until its token expires.
  const undenied = await deleteInBatches(service.db, revokedWorkloadTokens, revokedWorkloadTokens.tokenId, before(revokedWorkloadTokens.expiresAt, cutoff, revokedWorkloadTokens.workspaceId, ws));
  return total + undenied;
}

/** Development-outbox messages are kept a week: long enough to look up a test message, short enough not to pile up codes. */
export const OUTBOX_RETENTION_MS = 7 * DAY;

/**
 * The sign-in's short-lived rows, deleted like expired access tokens (an hour past expiry): pending
 * sign-ins (10 minutes, with their upstream round trips), authorization codes (60 seconds; a code
 * presented again within the hour still revokes what it issued), factor challenges (email codes, WebAuthn challenges), authenticator-app
 * enrolments never completed (they can be completed for 10 minutes), account-security portal
 * sessions (30 minutes at most), the IDs of accepted SAML assertions (kept until the assertion's
 * own expiry, after which it is refused by time anyway), and outbox messages older than
 * OUTBOX_RETENTION_MS. An expired one answers exactly like a missing one everywhere.
 */
export async function purgeExpiredSignInRows(
  service: Service,
  options: { workspaceId?: string } = {},
): Promise<{ transactions: number; codes: number; challenges: number; enrolments: number; portalSessions: number; samlAssertions: number; outbox: number }> {
  const now = service.clock.now().getTime();
  const cutoff = new Date(now - PURGE_GRACE_MS);
  const ws = options.workspaceId;
  const challenges = await deleteInBatches(service.db, factorChallenges, factorChallenges.id, before(factorChallenges.expiresAt, cutoff, factorChallenges.workspaceId, ws));
  const codes = await deleteInBatches(service.db, authorizationCodes, authorizationCodes.codeHash, before(authorizationCodes.expiresAt, cutoff, authorizationCodes.workspaceId, ws));
  const transactions = await deleteInBatches(
    service.db,
    authorizationTransactions,
    authorizationTransactions.id,
    before(authorizationTransactions.expiresAt, cutoff, authorizationTransactions.workspaceId, ws),
  );
  // An unconfirmed enrolment can be completed for 10 minutes (lib/authn/factors/totp/totp.ts ENROLMENT_TTL_MS).
  const enrolments = await deleteInBatches(
    service.db,
    totpFactors,
    totpFactors.id,
    and(isNull(totpFactors.confirmedAt), before(totpFactors.createdAt, new Date(now - 10 * MINUTE - PURGE_GRACE_MS), totpFactors.workspaceId, ws)),
  );
  // Account-security portal sessions last at most 30 minutes.
  const portalSessions = await deleteInBatches(
    service.db,
    accountSecurityPortalSessions,
    accountSecurityPortalSessions.id,
    before(accountSecurityPortalSessions.expiresAt, cutoff, accountSecurityPortalSessions.workspaceId, ws),
  );
  const samlAssertions = await deleteInBatches(
    service.db,
    samlAssertionReplays,
    samlAssertionReplays.assertionId,
    before(samlAssertionReplays.expiresAt, cutoff, samlAssertionReplays.workspaceId, ws),
  );
  const outbox = await deleteInBatches(service.db, mailOutbox, mailOutbox.id, before(mailOutbox.createdAt, new Date(now - OUTBOX_RETENTION_MS), mailOutbox.workspaceId, ws));
  return {
    transactions,
    codes,
    challenges,
    enrolments,
    portalSessions,
    samlAssertions,
    outbox,
  };
}

/**
 * How long an ended grant or hosted session is kept: the console's user page and the portal's
 * "applications" list show recent ones, and support questions about a recent sign-in can still be
 * answered. Their refresh tokens (every superseded one is kept while the family lives, for reuse
 * detection), codes, portal and console sessions and handoff launches go with them.
 */
export const ENDED_RETENTION_MS = 30 * DAY;

/**
 * Deletes grants (refresh families) over for ENDED_RETENTION_MS (revoked, or past their idle or
 * absolute bound) with everything that hangs on them, then hosted sessions over as long (ended, or
 * past their bounds) with everything that hangs on them. A session is over only when its grants
 * are (the authority chain), so nothing live goes. The guessing limits read an ended session as
 * this browser's proof for the cookie's lifetime (lib/authn/factors/limits.ts), which is shorter
 * than the retention (a test holds it). In batches; rows another instance is deleting are skipped.
 */
export async function purgeEndedSessions(service: Service, options: { workspaceId?: string } = {}): Promise<{ grants: number; sessions: number; launches: number }> {
  const now = service.clock.now().getTime();
  const cutoff = new Date(now - ENDED_RETENTION_MS);
  const ws = options.workspaceId;
  const grantOver = and(
    or(lt(grants.revokedAt, cutoff), lt(grants.idleExpiresAt, cutoff), lt(grants.absoluteExpiresAt, cutoff)),
    inWorkspace(grants.workspaceId, ws),
  );
  const sessionOver = and(
    or(lt(hostedSessions.endedAt, cutoff), lt(hostedSessions.idleExpiresAt, cutoff), lt(hostedSessions.absoluteExpiresAt, cutoff)),
    inWorkspace(hostedSessions.workspaceId, ws),
  );
  const grantCount = await deleteInBatches(service.db, grants, grants.id, grantOver);
  const sessionCount = await deleteInBatches(service.db, hostedSessions, hostedSessions.id, sessionOver);
  // A handoff launch lives 120 seconds; its row (which keeps its `state` one per launch) is kept as long.
  const launches = await deleteInBatches(service.db, accountSecurityLaunches, accountSecurityLaunches.id, before(accountSecurityLaunches.expiresAt, cutoff, accountSecurityLaunches.workspaceId, ws));
  return { grants: grantCount, sessions: sessionCount, launches };
}

/**
 * Deletes audit events older than AUDIT_RETENTION_DAYS (of one workspace when given), in batches;
 * nothing when no retention is configured (the default keeps every event).
 */
export async function purgeOldAuditEvents(service: Service, options: { workspaceId?: string } = {}): Promise<number> {
  const days = service.config.auditRetentionDays;
  if (!days) return 0;
  const cutoff = new Date(service.clock.now().getTime() - days * DAY);
  return deleteInBatches(service.db, auditEvents, auditEvents.id, before(auditEvents.createdAt, cutoff, auditEvents.workspaceId, options.workspaceId));
}

/**
 * Deletes operator invitations over for ENDED_RETENTION_MS: accepted, revoked, or past their
 * expiry. Until then the console lists them with their outcome; the audit log keeps the record.
 */
export async function purgeEndedInvitations(service: Service, options: { workspaceId?: string } = {}): Promise<number> {
  const cutoff = new Date(service.clock.now().getTime() - ENDED_RETENTION_MS);
  const over = and(
    or(lt(operatorInvitations.acceptedAt, cutoff), lt(operatorInvitations.revokedAt, cutoff), lt(operatorInvitations.expiresAt, cutoff)),
    inWorkspace(operatorInvitations.workspaceId, options.workspaceId),
  );
  return deleteInBatches(service.db, operatorInvitations, operatorInvitations.id, over);
}

/** The service setting that records which instance holds the purge, and since when. */
const PURGE_LEASE = "purge.lease";
/** How long a taken lease keeps other instances from purging: less than an interval, so its holder renews it. */
export const PURGE_LEASE_MS = PURGE_INTERVAL_MS - MINUTE;

/**
 * Takes the purge for `holder` when no instance took it within PURGE_LEASE_MS (one atomic
 * upsert: of instances racing for it, exactly one gets it). True when taken.
 */
export async function takePurgeLease(service: Service, holder: string): Promise<boolean> {
  const now = service.clock.now();
  const taken = await service.db
    .insert(serviceSettings)
    .values({ key: PURGE_LEASE, value: holder, updatedAt: now })
    .onConflictDoUpdate({ target: serviceSettings.key, set: { value: holder, updatedAt: now }, setWhere: lt(serviceSettings.updatedAt, new Date(now.getTime() - PURGE_LEASE_MS)) })
    .returning({ key: serviceSettings.key });
  return taken.length === 1;
}

/** One purge run: every kind of row past its retention (docs/operations.md), on the instance holding the lease only. */
export async function runPurge(service: Service, holder: string): Promise<boolean> {
  if (!(await takePurgeLease(service, holder))) return false;
  await purgeExpiredAccessTokens(service);
  await purgeExpiredSignInRows(service);
  await purgeEndedSessions(service);
  await purgeEndedInvitations(service);
  await purgeOldAuditEvents(service);
  await purgeEndedRateLimits(service.db, service.clock.now());
  return true;
}

/**
 * Runs the purge every PURGE_INTERVAL_MS (first run after one interval) on whichever instance
 * holds the lease; stop with the returned function.
 */
export function startAccessTokenPurge(service: Service): () => void {
  const holder = `${hostname()}:${process.pid}:${randomUUID()}`;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    runPurge(service, holder)
      .catch((error: Error) => console.warn(`[latchkey] expired row purge failed (retried in ${PURGE_INTERVAL_MS / MINUTE} min): ${error.message}`))
      .finally(() => {
        running = false;
      });
  }, PURGE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
