/**
 * Setup links and the portal sessions they start: the rules, as plain functions over a database
 * handle.
 *
 * - A workspace administrator makes a link for one organization and one address (normalized
 *   once, lib/authn/email-address.ts). Its secret is 32 random bytes, only the SHA-256 stored,
 *   shown once to its maker (and, when asked, mailed to the address). It is valid until its expiry
 *   (1 hour to 30 days) and can be revoked at any time.
 * - The link only names the portal: whoever opens it must prove the link's mailbox with a code
 *   sent to that address (./entry.ts). The right code starts the portal: one conditional UPDATE
 *   marks the link used (unused, unrevoked, unexpired; of parallel starts exactly one wins) and a
 *   session is made for this browser. A used link never starts another.
 * - A session reaches its link's organization only; it ends after PORTAL_SESSION_ABSOLUTE_MS, an
 *   idle PORTAL_SESSION_IDLE_MS, when signed out, and at once when its link is revoked or its
 *   organization deactivated or deleted.
 */
import { and, count, desc, eq, gt, inArray, isNull } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { organizationPortalLinks, organizationPortalSessions, organizations, workspaces } from "../../../db/schema";
import { addMs, HOUR } from "../../clock";
import { newId, randomToken, sha256Hex } from "../../crypto";
import { issuerFor } from "../../http/context";
import { isStorableText } from "../../text";
import { PORTAL_SEEN_WRITE_MS, PORTAL_SESSION_ABSOLUTE_MS, PORTAL_SESSION_IDLE_MS } from "./limits";

/** The portal's hosted page, below the workspace's issuer. */
export const PORTAL_PATH = "/organization-admin";
/** The portal session's cookie, scoped to the portal's path under the workspace's issuer. */
export const PORTAL_COOKIE = "lk_org_portal";

export type LinkRow = typeof organizationPortalLinks.$inferSelect;
export type PortalSessionRow = typeof organizationPortalSessions.$inferSelect;

/** The link's address: the portal page under the workspace's issuer, the secret in the query (the page sends no Referer). */
export function setupLinkUrl(publicUrl: string, workspaceId: string, token: string): string {
  return `${issuerFor(publicUrl, workspaceId)}${PORTAL_PATH}?link=${encodeURIComponent(token)}`;
}

/** The portal's page of one organization under the workspace's issuer: where a page the portal leads to (a connection test's result) links back. */
export function portalHomeUrl(publicUrl: string, workspaceId: string, organizationSlug: string): string {
  return `${issuerFor(publicUrl, workspaceId)}${PORTAL_PATH}?organization=${encodeURIComponent(organizationSlug)}`;
}

/** Secrets are 43 characters (32 bytes, base64url); anything much longer is not one. */
export const plausibleSecret = (token: string | null | undefined): token is string => typeof token === "string" && token.length > 0 && token.length <= 200 && isStorableText(token);

export interface NewLink {
  workspaceId: string;
  organizationId: string;
  email: string;
  emailNormalized: string;
  ttlHours: number;
  createdBy: { userId: string; email: string };
  now: Date;
}

/** Stores a new link; returns it with its secret (to show once). */
export async function makeLink(db: Database, input: NewLink): Promise<{ link: LinkRow; token: string }> {
  const token = randomToken(32);
  const [link] = await db
    .insert(organizationPortalLinks)
    .values({
      id: newId(),
      workspaceId: input.workspaceId,
      organizationId: input.organizationId,
      email: input.email,
      emailNormalized: input.emailNormalized,
      tokenHash: sha256Hex(token),
      createdBy: input.createdBy.userId,
      createdByEmail: input.createdBy.email,
      createdAt: input.now,
      expiresAt: addMs(input.now, input.ttlHours * HOUR),
    })
    .returning();
  return { link, token };
}

/** Revokes a link of the organization and ends every session it started. Null when it is not the organization's or was revoked already. */
export async function revokeLink(db: Database, input: { workspaceId: string; organizationId: string; linkId: string; by: string; now: Date }): Promise<{ link: LinkRow; sessionsEnded: number } | null> {
  const l = organizationPortalLinks;
  const [link] = await db
    .update(l)
    .set({ revokedAt: input.now, revokedBy: input.by })
    .where(and(eq(l.workspaceId, input.workspaceId), eq(l.organizationId, input.organizationId), eq(l.id, input.linkId), isNull(l.revokedAt)))
    .returning();
  if (!link) return null;
  const s = organizationPortalSessions;
  const ended = await db
    .update(s)
    .set({ endedAt: input.now })
    .where(and(eq(s.linkId, link.id), isNull(s.endedAt)))
    .returning({ id: s.id });
  return { link, sessionsEnded: ended.length };
}

export interface LinkInfo {
  id: string;
  email: string;
  createdByEmail: string;
  createdAt: Date;
  expiresAt: Date;
  startedAt: Date | null;
  revokedAt: Date | null;
  /** Usable to start: unused, unrevoked, unexpired. */
  state: "waiting" | "used" | "revoked" | "expired";
  /** Live sessions it started. */
  liveSessions: number;
}

/** The organization's links, newest first (the last 50). */
export async function listLinks(db: Database, workspaceId: string, organizationId: string, now: Date): Promise<LinkInfo[]> {
  const l = organizationPortalLinks;
  const s = organizationPortalSessions;
  const rows = await db.select().from(l).where(and(eq(l.workspaceId, workspaceId), eq(l.organizationId, organizationId))).orderBy(desc(l.createdAt)).limit(50);
  const live = new Map<string, number>();
  if (rows.length) {
    const counted = await db
      .select({ linkId: s.linkId, n: count() })
      .from(s)
      .where(and(inArray(s.linkId, rows.map((r) => r.id)), isNull(s.endedAt), gt(s.expiresAt, now), gt(s.lastSeenAt, addMs(now, -PORTAL_SESSION_IDLE_MS))))
      .groupBy(s.linkId);
    for (const c of counted) live.set(c.linkId, Number(c.n));
  }
  return rows.map((link) => ({
    id: link.id,
    email: link.email,
    createdByEmail: link.createdByEmail,
    createdAt: link.createdAt,
    expiresAt: link.expiresAt,
    startedAt: link.startedAt,
    revokedAt: link.revokedAt,
    state: link.revokedAt ? "revoked" : link.startedAt ? "used" : link.expiresAt <= now ? "expired" : "waiting",
    liveSessions: live.get(link.id) ?? 0,
  }));
}

/** The link a secret names while it can start the portal (unused, unrevoked, unexpired, its organization active), with the names the page shows. */
export async function startableLink(db: Database, workspaceId: string, token: string | null | undefined, now: Date): Promise<(LinkRow & { organizationName: string; workspaceName: string }) | null> {
  if (!plausibleSecret(token)) return null;
  const l = organizationPortalLinks;
  const [row] = await db
    .select({ link: l, organizationName: organizations.name, workspaceName: workspaces.name })
    .from(l)
    .innerJoin(organizations, and(eq(organizations.id, l.organizationId), eq(organizations.active, true)))
    .innerJoin(workspaces, eq(workspaces.id, l.workspaceId))
    .where(and(eq(l.workspaceId, workspaceId), eq(l.tokenHash, sha256Hex(token)), isNull(l.startedAt), isNull(l.revokedAt), gt(l.expiresAt, now)))
    .limit(1);
  return row ? { ...row.link, organizationName: row.organizationName, workspaceName: row.workspaceName } : null;
}

/**
 * Marks the link used and makes this browser's session, within `db` (a transaction): of parallel
 * starts exactly one wins (the conditional UPDATE); null when the link can no longer start.
 */
export async function startSession(db: Database, link: LinkRow, now: Date): Promise<{ session: PortalSessionRow; token: string } | null> {
  const l = organizationPortalLinks;
  const [used] = await db
    .update(l)
    .set({ startedAt: now })
    .where(and(eq(l.id, link.id), eq(l.tokenHash, link.tokenHash), isNull(l.startedAt), isNull(l.revokedAt), gt(l.expiresAt, now)))
    .returning({ id: l.id });
  if (!used) return null;
  const token = randomToken(32);
  const [session] = await db
    .insert(organizationPortalSessions)
    .values({
      id: newId(),
      workspaceId: link.workspaceId,
      organizationId: link.organizationId,
      linkId: link.id,
      email: link.emailNormalized,
      tokenHash: sha256Hex(token),
      createdAt: now,
      lastSeenAt: now,
      expiresAt: addMs(now, PORTAL_SESSION_ABSOLUTE_MS),
    })
    .returning();
  return { session, token };
}

/**
 * The live session a cookie's secret names in this workspace: unended, unexpired, used within the
 * idle hour, its link unrevoked and its organization active. Refreshes its idle clock (at most once
 * a minute).
 */
export async function liveSession(db: Database, workspaceId: string, token: string | null | undefined, now: Date): Promise<PortalSessionRow | null> {
  if (!plausibleSecret(token)) return null;
  const s = organizationPortalSessions;
  const l = organizationPortalLinks;
  const [row] = await db
    .select({ session: s })
    .from(s)
    .innerJoin(l, and(eq(l.id, s.linkId), isNull(l.revokedAt)))
    .innerJoin(organizations, and(eq(organizations.id, s.organizationId), eq(organizations.active, true)))
    .where(and(eq(s.tokenHash, sha256Hex(token)), eq(s.workspaceId, workspaceId), isNull(s.endedAt), gt(s.expiresAt, now), gt(s.lastSeenAt, addMs(now, -PORTAL_SESSION_IDLE_MS))))
    .limit(1);
  if (!row) return null;
  if (now.getTime() - row.session.lastSeenAt.getTime() >= PORTAL_SEEN_WRITE_MS) {
    await db.update(s).set({ lastSeenAt: now }).where(eq(s.id, row.session.id));
  }
  return row.session;
}

/** Ends a session (signed out). */
export async function endSession(db: Database, workspaceId: string, token: string | null | undefined, now: Date): Promise<boolean> {
  if (!plausibleSecret(token)) return false;
  const s = organizationPortalSessions;
  const ended = await db
    .update(s)
    .set({ endedAt: now })
    .where(and(eq(s.tokenHash, sha256Hex(token)), eq(s.workspaceId, workspaceId), isNull(s.endedAt)))
    .returning({ id: s.id });
  return ended.length === 1;
}
