/**
 * Delivery of security alerts, outbox-style from the audit log: an alert is sent for an audit event
 * of an alerting type (./policy.ts `ALERT_EVENTS`) only once the change and its event have
 * committed, so a change rolled back never mails. The dispatcher runs in the background on every
 * server (`startSecurityAlerts`) and looks back LOOK_BACK_MS, so an event whose server died after
 * the commit is sent by the next run, here or elsewhere. Each event is claimed before it is sent
 * (one INSERT … ON CONFLICT into `security_alerts`: of dispatchers racing, exactly one wins); a
 * claim its sender did not mark done within CLAIM_LEASE_MS (it died while sending, the mail server
 * failed) is taken again, MAX_ATTEMPTS times at most.
 *
 * Only events of the workspace's alerts that are on, and not older than the policy's last change,
 * alert; the account's address gets it, in the account's language (users.locale, else English).
 */
import { and, asc, eq, gt, gte, inArray, isNull, lt, lte, ne, or, sql, type SQL } from "drizzle-orm";
import { auditEvents, clients, grants, securityAlertPolicies, securityAlerts, users, workspaces } from "../../db/schema";
import { offersPortal } from "../account-security/portal-session";
import { deliver } from "../authn/email/transport";
import { DAY, MINUTE, SECOND } from "../clock";
import { issuerFor } from "../http/context";
import { isLocale } from "../i18n/locales";
import type { Service } from "../service";
import { applicationHome } from "../uris";
import { alertMessage } from "./messages";
import { lookUpPlace } from "./place";
import { ALERT_EVENTS, ALERT_EVENT_TYPES, ALERTS, type Alert, type AlertEventType } from "./policy";

/** How far back events are looked for: a server down longer than this loses those alerts (the audit log keeps the events). */
export const LOOK_BACK_MS = DAY;
/** How long a claim is its sender's before another dispatcher may take it again. */
export const CLAIM_LEASE_MS = 5 * MINUTE;
export const MAX_ATTEMPTS = 5;
export const DISPATCH_INTERVAL_MS = 5 * SECOND;
const BATCH = 100;

const POLICY_COLUMN = {
  new_password: securityAlertPolicies.newPassword,
  factor_changed: securityAlertPolicies.factorChanged,
  new_recovery_codes: securityAlertPolicies.newRecoveryCodes,
  new_browser: securityAlertPolicies.newBrowser,
  token_reuse: securityAlertPolicies.tokenReuse,
} as const satisfies Record<Alert, unknown>;

const typesOf = (alert: Alert) => ALERT_EVENT_TYPES.filter((t) => ALERT_EVENTS[t] === alert);

/** An event of an alert the workspace has on (a sign-in only when from a new browser). */
const ALERTING: SQL = and(
  inArray(auditEvents.type, ALERT_EVENT_TYPES),
  or(...ALERTS.map((a) => and(inArray(auditEvents.type, typesOf(a)), eq(POLICY_COLUMN[a], true)))),
  or(ne(auditEvents.type, "sign_in.succeeded"), sql`${auditEvents.data} ->> 'new_browser' = 'true'`),
)!;

export interface DispatchOptions {
  /** Of one workspace only (tests share one database). */
  workspaceId?: string;
  /**
   * Only events after this (within LOOK_BACK_MS), and lapsed claims of older ones: the background
   * dispatcher's last complete run, less a margin, so that a run reads minutes of events, not a day.
   */
  after?: Date;
  /** The issuer the portal's link is under: the workspace's primary one (the console's rule, given by the server). */
  issuerOf?: (service: Service, workspaceId: string) => Promise<string>;
}

export interface DispatchResult {
  sent: number;
  /** Claimed, but nobody to send to (the account is gone). */
  skipped: number;
  /** Claimed, not sent: retried after the lease. */
  failed: number;
}

interface Candidate {
  id: string;
  workspaceId: string;
  type: string;
  subject: string | null;
  clientId: string | null;
  data: Record<string, unknown>;
  ip: string | null;
  at: Date;
}

/**
 * Sends the alerts due now; returns what it did. Runs until no event is left unclaimed: each batch
 * is claimed here or by another dispatcher, and a claim is not taken again within its lease.
 */
export async function dispatchSecurityAlerts(service: Service, options: DispatchOptions = {}): Promise<DispatchResult> {
  const result: DispatchResult = { sent: 0, skipped: 0, failed: 0 };
  for (;;) {
    const { due, won } = await claimBatch(service, options);
    if (due === 0) return result;
    if (won.length > 0) await sendClaimed(service, options, won, result);
  }
}

/** Finds due events and claims them: how many were due, and those this dispatcher won. */
async function claimBatch(service: Service, options: DispatchOptions): Promise<{ due: number; won: Candidate[] }> {
  const now = service.clock.now();
  const leaseCutoff = new Date(now.getTime() - CLAIM_LEASE_MS);
  const lookBack = new Date(now.getTime() - LOOK_BACK_MS);
  const from = options.after && options.after > lookBack ? options.after : lookBack;
  const e = auditEvents;
  const a = securityAlerts;
  const p = securityAlertPolicies;
  const columns = { id: e.id, workspaceId: e.workspaceId, type: e.type, subject: e.subject, clientId: e.clientId, data: e.data, ip: e.ip, at: e.createdAt };
  const lapsed = and(isNull(a.outcome), lt(a.claimedAt, leaseCutoff), lt(a.attempts, MAX_ATTEMPTS));
  const due: Candidate[] = await service.db
    .select(columns)
    .from(e)
    .innerJoin(p, eq(p.workspaceId, e.workspaceId))
    .leftJoin(a, eq(a.eventId, e.id))
    .where(and(options.workspaceId ? eq(e.workspaceId, options.workspaceId) : undefined, gt(e.createdAt, from), gte(e.createdAt, p.updatedAt), ALERTING, or(isNull(a.eventId), lapsed)))
    .orderBy(asc(e.createdAt))
    .limit(BATCH);
  if (from > lookBack) {
    // A claim whose sender let its lease lapse, for an event older than the window this run looks at: found from the (few) claims.
    const retried = await service.db
      .select(columns)
      .from(a)
      .innerJoin(e, eq(e.id, a.eventId))
      .innerJoin(p, eq(p.workspaceId, e.workspaceId))
      .where(and(options.workspaceId ? eq(a.workspaceId, options.workspaceId) : undefined, lapsed, gt(e.createdAt, lookBack), lte(e.createdAt, from), gte(e.createdAt, p.updatedAt), ALERTING))
      .orderBy(asc(e.createdAt))
      .limit(BATCH);
    due.push(...retried);
  }
  if (due.length === 0) return { due: 0, won: [] };
  const won = await service.db
    .insert(a)
    .values(due.map((d) => ({ eventId: d.id, workspaceId: d.workspaceId, kind: ALERT_EVENTS[d.type as AlertEventType], claimedAt: now })))
    .onConflictDoUpdate({
      target: a.eventId,
      set: { claimedAt: now, attempts: sql`${a.attempts} + 1` },
      // Only a claim whose sender let its lease lapse: of dispatchers racing, one wins each event.
      setWhere: and(isNull(a.outcome), lt(a.claimedAt, leaseCutoff), lt(a.attempts, MAX_ATTEMPTS)),
    })
    .returning({ eventId: a.eventId });
  const ids = new Set(won.map((w) => w.eventId));
  return { due: due.length, won: due.filter((d) => ids.has(d.id)) };
}

async function markDone(service: Service, eventId: string, outcome: "sent" | "no_account"): Promise<void> {
  await service.db.update(securityAlerts).set({ outcome, doneAt: service.clock.now() }).where(eq(securityAlerts.eventId, eventId));
}

const str = (v: unknown) => (typeof v === "string" && v ? v : null);

async function sendClaimed(service: Service, options: DispatchOptions, claimed: Candidate[], result: DispatchResult): Promise<void> {
  // The user a refresh-token reuse is about is the grant's (its subject is the application's view of them).
  const grantIds = claimed.flatMap((c) => (c.type === "refresh.reuse_detected" && str(c.data.grant_id) ? [str(c.data.grant_id)!] : []));
  const grantRows = grantIds.length
    ? await service.db.select({ id: grants.id, userId: grants.userId, clientPk: grants.clientPk, applicationName: clients.name }).from(grants).leftJoin(clients, eq(clients.id, grants.clientPk)).where(inArray(grants.id, grantIds))
    : [];
  const grantOf = new Map(grantRows.map((g) => [g.id, g]));
  const userOf = (c: Candidate): string | null => {
    if (c.type === "refresh.reuse_detected") return grantOf.get(str(c.data.grant_id) ?? "")?.userId ?? null;
    // An operator's change names the user in its data (its subject is the address).
    if (c.type.startsWith("console.")) return str(c.data.user_id);
    return c.subject;
  };
  const userIds = [...new Set(claimed.map(userOf).filter((u): u is string => u !== null))];
  const userRows = userIds.length ? await service.db.select({ id: users.id, workspaceId: users.workspaceId, email: users.email, locale: users.locale }).from(users).where(inArray(users.id, userIds)) : [];
  const workspaceIds = [...new Set(claimed.map((c) => c.workspaceId))];
  const workspaceRows = await service.db.select({ id: workspaces.id, name: workspaces.name }).from(workspaces).where(inArray(workspaces.id, workspaceIds));
  const portal = new Map<string, Promise<PortalLinks>>();
  const places = new Map<string, Promise<string | null>>();

  for (const c of claimed) {
    const userId = userOf(c);
    const user = userRows.find((u) => u.id === userId && u.workspaceId === c.workspaceId);
    const workspace = workspaceRows.find((w) => w.id === c.workspaceId);
    if (!user || !workspace) {
      await markDone(service, c.id, "no_account");
      result.skipped++;
      continue;
    }
    try {
      let links = portal.get(c.workspaceId);
      if (!links) portal.set(c.workspaceId, (links = portalLinks(service, options, c.workspaceId)));
      const grant = grantOf.get(str(c.data.grant_id) ?? "");
      const { issuer, linkFor } = await links;
      let place: Promise<string | null> | undefined;
      if (c.ip && !(place = places.get(c.ip))) places.set(c.ip, (place = lookUpPlace(service, c.ip)));
      const message = alertMessage({
        type: c.type as AlertEventType,
        data: c.data,
        at: c.at,
        ip: c.ip,
        place: place ? await place : null,
        to: user.email,
        locale: isLocale(user.locale) ? user.locale : "en",
        workspaceName: workspace.name,
        applicationName: grant?.applicationName ?? null,
        portalUrl: linkFor(grant?.clientPk ?? str(c.data.client)),
      });
      const host = new URL(issuer).host;
      await deliver({ service, workspace, hostname: host === new URL(service.config.publicUrl).host ? null : new URL(issuer).hostname }, message);
      await markDone(service, c.id, "sent");
      result.sent++;
    } catch (error) {
      result.failed++;
      console.error(`[latchkey] security alert ${c.id} not sent (tried again in ${CLAIM_LEASE_MS / MINUTE} min): ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

interface PortalLinks {
  issuer: string;
  /** The portal's direct link through `clientPk` when it offers the portal, else through another application that does; null when none does. */
  linkFor(clientPk: string | null): string | null;
}

async function portalLinks(service: Service, options: DispatchOptions, workspaceId: string): Promise<PortalLinks> {
  const issuer = options.issuerOf ? await options.issuerOf(service, workspaceId) : issuerFor(service.config.publicUrl, workspaceId);
  const offering = (
    await service.db
      .select({ id: clients.id, clientId: clients.clientId, accountSecurity: clients.accountSecurity, active: clients.active, type: clients.type, redirectUris: clients.redirectUris, homeUri: clients.homeUri })
      .from(clients)
      .where(and(eq(clients.workspaceId, workspaceId), eq(clients.accountSecurity, true), eq(clients.active, true)))
      .orderBy(asc(clients.createdAt), asc(clients.id))
  ).filter((c) => offersPortal(c) && applicationHome(c) !== null);
  return {
    issuer,
    linkFor(clientPk) {
      const client = offering.find((c) => c.id === clientPk) ?? offering[0];
      return client ? `${issuer}/auth/account?client_id=${encodeURIComponent(client.clientId)}` : null;
    },
  };
}

/**
 * A background run looks again at events from SCAN_MARGIN_MS before its last complete run: an event
 * is written with its change's time, and committed at most a statement's bounded time later.
 */
export const SCAN_MARGIN_MS = 10 * MINUTE;

/**
 * Sends the alerts due every DISPATCH_INTERVAL_MS (first run after one interval); stop with the
 * returned function. Every server runs it: the claims keep each alert to one sender. Its first run
 * looks back LOOK_BACK_MS; later ones from their last complete run, less SCAN_MARGIN_MS.
 */
export function startSecurityAlerts(service: Service, options: Omit<DispatchOptions, "workspaceId" | "after"> = {}): () => void {
  let running = false;
  let through: Date | null = null;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    const started = service.clock.now();
    // A clock set back (a test server's) starts over from the whole look-back.
    if (through && through > started) through = null;
    dispatchSecurityAlerts(service, { ...options, ...(through ? { after: new Date(through.getTime() - SCAN_MARGIN_MS) } : {}) })
      .then(() => {
        through = started;
      })
      .catch((error: Error) => console.warn(`[latchkey] security alerts not dispatched (retried in ${DISPATCH_INTERVAL_MS / SECOND} s): ${error.message}`))
      .finally(() => {
        running = false;
      });
  }, DISPATCH_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
