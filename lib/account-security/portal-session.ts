/**
 * The portal session: what lets a browser use the account-security portal of one application.
 *
 * - It is opened from a live hosted session (the direct link, a handoff launch that opens the
 *   portal at once, or a redeemed completion handle), for one application and, after a handoff,
 *   that application's grant. It lasts at most 30 minutes (PORTAL_SESSION_MS).
 * - It never outlives its source authority: each use judges, through lib/authority, the hosted
 *   session it came from with its user and the application (`selectHostedSessionChain`), and the
 *   grant when it has one (`selectGrantChain`). The first dead link ends the portal at once.
 * - It is bound to the authentication-host cookie: its own cookie (`<id>.<secret>`, only the
 *   secret's hash stored, lib/authn/session-token.ts) is accepted only beside the hosted session
 *   cookie of the very session it came from.
 * - The application must still offer the portal (`accountSecurity`, active, not M2M).
 */
import { applicationHome, applicationOrigin } from "../uris";
import { and, eq, isNull } from "drizzle-orm";
import { accountSecurityPortalSessions, clients, grants, hostedSessions } from "../../db/schema";
import { nowValue, selectGrantChain, selectHostedSessionChain } from "../authority";
import { readSessionCookie, type HostedSession } from "../authn/hosted-session";
import { newSessionToken, parseSessionToken, verifySessionSecret } from "../authn/session-token";
import { addMs, MINUTE } from "../clock";
import { atHostname, type EndpointContext } from "../http/context";
import { clearCookie, parseCookieHeader, serializeCookie } from "../http/cookies";
import { recordAudit } from "../audit/events";
import type { AuditEventType } from "../audit/catalogue";
import type { ClientRow } from "../oauth/clients";

/** SPEC: a portal session lasts at most 30 minutes. */
export const PORTAL_SESSION_MS = 30 * MINUTE;
export const PORTAL_COOKIE = "lk_portal";
/** The portal page, relative to the issuer. */
export const PORTAL_PATH = "/account";

export type PortalSessionRow = typeof accountSecurityPortalSessions.$inferSelect;

/** A live portal session with what its pages need: the hosted session, the application. */
export interface PortalSession {
  id: string;
  userId: string;
  sessionId: string;
  clientPk: string;
  grantId: string | null;
  /** Where the portal's "back" link goes (an https URL on the application's origin). */
  returnUri: string;
  createdAt: Date;
  expiresAt: Date;
  row: PortalSessionRow;
  session: HostedSession;
  client: Pick<ClientRow, "id" | "clientId" | "name" | "type" | "authPolicy" | "redirectUris">;
}

/** Whether an application offers the portal: the console's switch, active, a user-facing type. */
export function offersPortal(client: Pick<ClientRow, "accountSecurity" | "active" | "type">): boolean {
  return client.accountSecurity && client.active && client.type !== "M2M";
}

export { applicationOrigin };

/**
 * Where the portal's "Back to …" link and "Done" go after the direct link: the application's home
 * (lib/uris.ts `applicationHome`). A backend handoff goes back to its `return_uri` instead.
 */
export const directLinkReturnUri = applicationHome;

/**
 * Opens a portal session for a live hosted session (the caller has judged it and the application
 * offers the portal). `cookie` is the Set-Cookie value of the portal cookie, `location` the portal
 * page's path to redirect to.
 */
export async function openPortalSession(
  ctx: EndpointContext,
  input: { userId: string; sessionId: string; clientPk: string; grantId: string | null; returnUri: string },
): Promise<{ id: string; cookie: string; location: string }> {
  const now = ctx.service.clock.now();
  const token = newSessionToken();
  await ctx.service.db.insert(accountSecurityPortalSessions).values({
    id: token.id,
    workspaceId: ctx.workspace.id,
    userId: input.userId,
    sessionId: input.sessionId,
    clientPk: input.clientPk,
    grantId: input.grantId,
    returnUri: input.returnUri,
    secretHash: token.secretHash,
    createdAt: now,
    expiresAt: addMs(now, PORTAL_SESSION_MS),
  });
  await auditPortal(ctx, { id: token.id, userId: input.userId, clientPk: input.clientPk }, { ip: null }, "account_security.portal_opened", {
    grant: input.grantId,
    via: input.grantId ? "handoff" : "direct_link",
  });
  return {
    id: token.id,
    cookie: serializeCookie(PORTAL_COOKIE, token.token, ctx.basePath, PORTAL_SESSION_MS / 1000),
    location: `${ctx.basePath}${PORTAL_PATH}`,
  };
}

/** Who acts in the portal: the portal session and its user, and the application where known. */
export interface PortalAuditActor {
  id: string;
  userId: string;
  clientPk?: string | null;
}

/**
 * The one audit record of the account-security portal: the user as actor and subject, the portal
 * session, the application (`client`, its internal id) where known, and the request's address.
 */
export async function auditPortal(
  ctx: Pick<EndpointContext, "service" | "workspace">,
  actor: PortalAuditActor,
  source: { ip: string | null },
  type: Extract<AuditEventType, `account_security.${string}`>,
  data: Record<string, unknown> = {},
): Promise<void> {
  await recordAudit(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    type,
    actor: actor.userId,
    subject: actor.userId,
    data: { ...data, portal_session: actor.id, ...(actor.clientPk ? { client: actor.clientPk } : {}) },
    ip: source.ip,
    at: ctx.service.clock.now(),
  });
}

export function clearPortalCookie(ctx: EndpointContext): string {
  return clearCookie(PORTAL_COOKIE, ctx.basePath);
}

/**
 * The live portal session named by the request's cookies, or null: the portal cookie must name an
 * unended, unexpired portal session of this workspace whose secret matches, the hosted session
 * cookie must be that of the same hosted session, and its authority must be live (lib/authority:
 * the session, its user and the application; the grant when it has one); the application must
 * still offer the portal.
 */
export async function livePortalSession(ctx: EndpointContext, cookieHeader: string | null): Promise<PortalSession | null> {
  const presented = parseSessionToken(parseCookieHeader(cookieHeader).get(PORTAL_COOKIE));
  const hosted = readSessionCookie(cookieHeader);
  if (!presented || !hosted) return null;
  const now = ctx.service.clock.now();
  const [row] = await ctx.service.db
    .select()
    .from(accountSecurityPortalSessions)
    .where(and(eq(accountSecurityPortalSessions.workspaceId, ctx.workspace.id), eq(accountSecurityPortalSessions.id, presented.id), isNull(accountSecurityPortalSessions.endedAt)))
    .limit(1);
  if (!row || !verifySessionSecret(row, presented.secret)) return null;
  if (row.expiresAt.getTime() <= now.getTime()) return null;
  // Bound to the authentication-host cookie: the same hosted session, its secret.
  if (hosted.id !== row.sessionId) return null;
  const source = await judgeSource(ctx, row, now);
  if (!source || !verifySessionSecret(source.session, hosted.secret)) return null;
  return {
    id: row.id,
    userId: row.userId,
    sessionId: row.sessionId,
    clientPk: row.clientPk,
    grantId: row.grantId,
    returnUri: row.returnUri,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    row,
    session: source.session,
    client: source.client,
  };
}

/** The portal row's source authority, judged by lib/authority; null at its first dead link. */
async function judgeSource(ctx: EndpointContext, row: PortalSessionRow, now: Date): Promise<{ session: HostedSession; client: PortalSession["client"] } | null> {
  const [chain] = await selectHostedSessionChain(
    ctx.service.db,
    nowValue(now),
    {
      session: hostedSessions,
      client: {
        id: clients.id,
        clientId: clients.clientId,
        name: clients.name,
        type: clients.type,
        active: clients.active,
        accountSecurity: clients.accountSecurity,
        authPolicy: clients.authPolicy,
        redirectUris: clients.redirectUris,
        workspaceId: clients.workspaceId,
      },
    },
    row.clientPk,
  )
    .where(and(eq(hostedSessions.workspaceId, ctx.workspace.id), eq(hostedSessions.id, row.sessionId), atHostname(hostedSessions.hostname, ctx.hostname)))
    .limit(1);
  if (!chain || chain.refusal !== null || !chain.client) return null;
  if (chain.session.userId !== row.userId || chain.client.workspaceId !== ctx.workspace.id || !offersPortal(chain.client)) return null;
  if (row.grantId !== null) {
    const [grant] = await selectGrantChain(ctx.service.db, nowValue(now), { grantUserId: grants.userId, grantSessionId: grants.sessionId, grantClientPk: grants.clientPk })
      .where(and(eq(grants.workspaceId, ctx.workspace.id), eq(grants.id, row.grantId)))
      .limit(1);
    if (!grant || grant.refusal !== null) return null;
    if (grant.grantUserId !== row.userId || grant.grantSessionId !== row.sessionId || grant.grantClientPk !== row.clientPk) return null;
  }
  const { id, clientId, name, type, authPolicy, redirectUris } = chain.client;
  return { session: chain.session, client: { id, clientId, name, type, authPolicy, redirectUris } };
}

/** Ends a portal session (the portal's own "done" action); false when it had already ended. */
export async function endPortalSession(ctx: EndpointContext, portalId: string): Promise<boolean> {
  const now = ctx.service.clock.now();
  const ended = await ctx.service.db
    .update(accountSecurityPortalSessions)
    .set({ endedAt: now })
    .where(and(eq(accountSecurityPortalSessions.workspaceId, ctx.workspace.id), eq(accountSecurityPortalSessions.id, portalId), isNull(accountSecurityPortalSessions.endedAt)))
    .returning({ id: accountSecurityPortalSessions.id });
  return ended.length > 0;
}
