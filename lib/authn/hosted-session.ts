import { and, eq, gt, inArray, isNull, ne } from "drizzle-orm";
import type { Database } from "../../db/client";
import { accountSecurityPortalSessions, consoleSessions, grants, hostedSessions } from "../../db/schema";
import { nowValue, selectHostedSessionChain, sessionIsLive } from "../authority";
import { readEvidence, sessionClaims, withEvidence, type Evidence } from "./evidence";
import { addMs, HOUR, DAY } from "../clock";
import { atHostname, type EndpointContext } from "../http/context";
import { clearCookie, parseCookieHeader, serializeCookie } from "../http/cookies";
import { idleExpiryFrom, newSessionToken, parseSessionToken, slideIdleExpiry, verifySessionSecret } from "./session-token";

export const SESSION_COOKIE = "lk_session";
export const SESSION_IDLE_MS = 12 * HOUR;
export const SESSION_ABSOLUTE_MS = 7 * DAY;

export type HostedSession = typeof hostedSessions.$inferSelect;

export interface NewSessionInput {
  userId: string;
  /** What the user proved to open the session: at least one primary event (evidence.ts). */
  evidence: Evidence[];
  userAgent?: string | null;
  ip?: string | null;
  /** The organization and enterprise connection of a federated sign-in (lib/federation): they are part of the session's authority. */
  organizationId?: string | null;
  connectionId?: string | null;
}

/**
 * Lucia-style session token (lib/authn/session-token.ts): `<id>.<secret>`, only SHA-256 of the
 * secret is stored. auth_time, amr and acr are stored as derived from the evidence
 * (sessionClaims), for readers that list them.
 */
export async function createHostedSession(ctx: EndpointContext, input: NewSessionInput): Promise<{ session: HostedSession; cookie: string }> {
  const now = ctx.service.clock.now();
  const evidence = input.evidence.reduce(withEvidence, []);
  const claims = sessionClaims(evidence);
  const token = newSessionToken();
  const absolute = addMs(now, SESSION_ABSOLUTE_MS);
  const [session] = await ctx.service.db
    .insert(hostedSessions)
    .values({
      id: token.id,
      workspaceId: ctx.workspace.id,
      userId: input.userId,
      secretHash: token.secretHash,
      evidence,
      authTime: claims.authTime,
      amr: claims.amr,
      acr: claims.acr,
      createdAt: now,
      lastSeenAt: now,
      idleExpiresAt: idleExpiryFrom(now, SESSION_IDLE_MS, absolute),
      absoluteExpiresAt: absolute,
      userAgent: input.userAgent?.slice(0, 512) ?? null,
      ip: input.ip ?? null,
      organizationId: input.organizationId ?? null,
      connectionId: input.connectionId ?? null,
      hostname: ctx.hostname,
    })
    .returning();
  return { session, cookie: serializeCookie(SESSION_COOKIE, token.token, ctx.basePath, SESSION_ABSOLUTE_MS / 1000) };
}

/** A session row's own state (not ended, within its bounds): the session link of lib/authority. */
export { sessionIsLive } from "../authority";

/** The `<id>.<secret>` of the session cookie, if the request carries a well-formed one. */
export function readSessionCookie(cookieHeader: string | null): { id: string; secret: string } | null {
  return parseSessionToken(parseCookieHeader(cookieHeader).get(SESSION_COOKIE));
}

/** The live hosted session named by the request's cookie, with its idle expiry slid forward. */
export async function getLiveSession(ctx: EndpointContext, cookieHeader: string | null): Promise<HostedSession | null> {
  const cookie = readSessionCookie(cookieHeader);
  if (!cookie) return null;
  const { id, secret } = cookie;
  const now = ctx.service.clock.now();
  // The session with its chain (lib/authority): its own state, the user, the session's organization and connection.
  const [row] = await selectHostedSessionChain(ctx.service.db, nowValue(now), { session: hostedSessions })
    // A session lives at the hostname whose cookie carries it: presented at another, it is none.
    .where(and(eq(hostedSessions.workspaceId, ctx.workspace.id), eq(hostedSessions.id, id), atHostname(hostedSessions.hostname, ctx.hostname)))
    .limit(1);
  if (!row || !verifySessionSecret(row.session, secret)) return null;
  if (row.refusal !== null) return null;
  const session = row.session;
  const idle = slideIdleExpiry(session, now, SESSION_IDLE_MS);
  if (idle) {
    await ctx.service.db
      .update(hostedSessions)
      .set({ lastSeenAt: now, idleExpiresAt: idle })
      .where(and(eq(hostedSessions.id, session.id), isNull(hostedSessions.endedAt), gt(hostedSessions.idleExpiresAt, now)));
    session.lastSeenAt = now;
    session.idleExpiresAt = idle;
  }
  return session;
}

export async function endHostedSession(ctx: EndpointContext, sessionId: string, reason: string): Promise<boolean> {
  const now = ctx.service.clock.now();
  const ended = await ctx.service.db
    .update(hostedSessions)
    .set({ endedAt: now, endReason: reason })
    .where(and(eq(hostedSessions.workspaceId, ctx.workspace.id), eq(hostedSessions.id, sessionId), isNull(hostedSessions.endedAt)))
    .returning({ id: hostedSessions.id });
  return ended.length > 0;
}

/** What of an account's sessions a change keeps: the browser that made it. */
export interface KeptSession {
  consoleSessionId?: string | null;
  hostedSessionId?: string | null;
  grantId?: string | null;
}

/**
 * Ends an account's access at once, the one rule for it: its live hosted sessions and its grants
 * (refresh tokens stop, and every access token fails its checks), its account-security portal
 * sessions and, for an operator (a user of the system workspace), its console sessions; all but
 * `keep`'s (the browser making the change). With `organizationId`, only the hosted sessions opened
 * through that organization and the grants made in them (the account's own others are kept).
 * Returns how many hosted sessions and grants it ended.
 */
export async function endAccountSessions(
  db: Database,
  input: { workspaceId: string; userId: string; now: Date; reason: string; keep?: KeptSession; organizationId?: string },
): Promise<{ sessions: number; grants: number }> {
  const { workspaceId, userId, now, reason, keep = {}, organizationId } = input;
  const whole = organizationId === undefined;
  if (whole) {
    await db
      .update(consoleSessions)
      .set({ endedAt: now, endReason: reason })
      .where(and(eq(consoleSessions.operatorUserId, userId), isNull(consoleSessions.endedAt), keep.consoleSessionId ? ne(consoleSessions.id, keep.consoleSessionId) : undefined));
  }
  const sessions = await db
    .update(hostedSessions)
    .set({ endedAt: now, endReason: reason })
    .where(
      and(
        eq(hostedSessions.workspaceId, workspaceId),
        eq(hostedSessions.userId, userId),
        isNull(hostedSessions.endedAt),
        whole ? undefined : eq(hostedSessions.organizationId, organizationId),
        keep.hostedSessionId ? ne(hostedSessions.id, keep.hostedSessionId) : undefined,
      ),
    )
    .returning({ id: hostedSessions.id });
  const ended = await db
    .update(grants)
    .set({ revokedAt: now, revokeReason: reason })
    .where(
      and(
        eq(grants.workspaceId, workspaceId),
        eq(grants.userId, userId),
        isNull(grants.revokedAt),
        keep.grantId ? ne(grants.id, keep.grantId) : undefined,
        whole
          ? undefined
          : inArray(
              grants.sessionId,
              db
                .select({ id: hostedSessions.id })
                .from(hostedSessions)
                .where(and(eq(hostedSessions.workspaceId, workspaceId), eq(hostedSessions.userId, userId), eq(hostedSessions.organizationId, organizationId))),
            ),
      ),
    )
    .returning({ id: grants.id });
  if (whole) {
    await db
      .update(accountSecurityPortalSessions)
      .set({ endedAt: now })
      .where(and(eq(accountSecurityPortalSessions.workspaceId, workspaceId), eq(accountSecurityPortalSessions.userId, userId), isNull(accountSecurityPortalSessions.endedAt)));
  }
  return { sessions: sessions.length, grants: ended.length };
}

export function clearSessionCookie(ctx: EndpointContext): string {
  return clearCookie(SESSION_COOKIE, ctx.basePath);
}

/**
 * Gives a live session a new secret (after a step-up: a new authentication must not keep a token
 * that existed before it). The old cookie stops working at once. Null when the session is no
 * longer live.
 */
export async function rotateSessionSecret(ctx: EndpointContext, session: HostedSession): Promise<{ session: HostedSession; cookie: string } | null> {
  const now = ctx.service.clock.now();
  const token = newSessionToken(session.id);
  const [updated] = await ctx.service.db
    .update(hostedSessions)
    .set({ secretHash: token.secretHash })
    .where(and(eq(hostedSessions.workspaceId, ctx.workspace.id), eq(hostedSessions.id, session.id), isNull(hostedSessions.endedAt), gt(hostedSessions.idleExpiresAt, now)))
    .returning();
  if (!updated) return null;
  return { session: updated, cookie: serializeCookie(SESSION_COOKIE, token.token, ctx.basePath, SESSION_ABSOLUTE_MS / 1000) };
}

/**
 * Adds an authentication event to a live session (a second factor, a step-up, a re-entered
 * password) and re-derives its stored auth_time, amr and acr, in one transaction holding the
 * session's row, so concurrent additions each see the other's. Null when the session is not a
 * live session of this workspace (ended, expired, or unknown).
 */
export async function appendEvidence(ctx: EndpointContext, sessionId: string, event: Evidence): Promise<HostedSession | null> {
  const now = ctx.service.clock.now();
  return ctx.service.db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(hostedSessions)
      .where(and(eq(hostedSessions.workspaceId, ctx.workspace.id), eq(hostedSessions.id, sessionId)))
      .for("update");
    if (!row || !sessionIsLive(row, now)) return null;
    const evidence = withEvidence(readEvidence(row.evidence), event);
    const claims = sessionClaims(evidence);
    const [updated] = await tx
      .update(hostedSessions)
      .set({ evidence, authTime: claims.authTime, amr: claims.amr, acr: claims.acr })
      .where(eq(hostedSessions.id, row.id))
      .returning();
    return updated;
  });
}
