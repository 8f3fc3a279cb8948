/**
 * An organization's directory: its settings, and the bearer tokens its identity provider calls the
 * SCIM endpoints with. A token is 32 random bytes, shown once; only its SHA-256 is kept. A rotation
 * keeps the previous token working for the overlap asked (at most 24 hours) and never leaves more
 * than two working; a revocation ends one at once. Each change locks the directory's row first, so
 * that concurrent rotations cannot leave three.
 */
import { and, desc, eq, gt, isNull, lt, or } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { organizations, scimDirectories, scimTokens, type ScimGroupRoles } from "../../../db/schema";
import { addMs, HOUR } from "../../clock";
import { CodedError } from "../../coded-error";
import { newId, randomToken, sha256Hex } from "../../crypto";

export const TOKEN_PREFIX = "lks_scim_";
export const MAX_TOKEN_OVERLAP_HOURS = 24;
export const MAX_ACTIVE_TOKENS = 2;

export type Directory = typeof scimDirectories.$inferSelect;

export interface DirectorySettings {
  enabled: boolean;
  connectionId: string | null;
  subjectAttribute: Directory["subjectAttribute"];
  localSignIn: boolean;
  anyDomain: boolean;
  groupRoles: ScimGroupRoles[];
}

export const DEFAULT_SETTINGS: DirectorySettings = { enabled: true, connectionId: null, subjectAttribute: "externalId", localSignIn: false, anyDomain: false, groupRoles: [] };

/** The "token works" rule, in SQL: not revoked, and no expiry or one still ahead. */
export function tokenActiveSql(now: Date) {
  return and(isNull(scimTokens.revokedAt), or(isNull(scimTokens.expiresAt), gt(scimTokens.expiresAt, now)))!;
}

/** Its twin for a loaded row. */
export function isActiveToken(row: { revokedAt: Date | null; expiresAt: Date | null }, now: Date): boolean {
  return row.revokedAt === null && (row.expiresAt === null || row.expiresAt.getTime() > now.getTime());
}

export async function directoryOf(db: Database, workspaceId: string, organizationId: string): Promise<Directory | null> {
  const [row] = await db
    .select()
    .from(scimDirectories)
    .where(and(eq(scimDirectories.workspaceId, workspaceId), eq(scimDirectories.organizationId, organizationId)))
    .limit(1);
  return row ?? null;
}

/** Creates the organization's directory with `settings`, or changes its settings; returns it. */
export async function saveDirectory(db: Database, input: { workspaceId: string; organizationId: string; settings: DirectorySettings; now: Date }): Promise<Directory> {
  const { workspaceId, organizationId, settings, now } = input;
  const [row] = await db
    .insert(scimDirectories)
    .values({ id: newId(), workspaceId, organizationId, ...settings, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: [scimDirectories.workspaceId, scimDirectories.organizationId], set: { ...settings, updatedAt: now } })
    .returning();
  return row;
}

export class ScimTokenError extends CodedError<"too_many_active_tokens" | "token_not_found" | "invalid_argument"> {}

export interface TokenInfo {
  id: string;
  active: boolean;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

export async function listTokens(db: Database, workspaceId: string, directoryId: string, now: Date): Promise<TokenInfo[]> {
  const rows = await db
    .select()
    .from(scimTokens)
    .where(and(eq(scimTokens.workspaceId, workspaceId), eq(scimTokens.directoryId, directoryId)))
    .orderBy(desc(scimTokens.createdAt), desc(scimTokens.id));
  return rows.map((r) => ({ id: r.id, active: isActiveToken(r, now), createdAt: r.createdAt, expiresAt: r.expiresAt, revokedAt: r.revokedAt, lastUsedAt: r.lastUsedAt }));
}

/**
 * A new token for the directory (shown once). The tokens working now keep working for
 * `overlapHours` (0: they stop at once); with two already working and an overlap, the older must
 * be revoked first.
 */
export async function issueToken(
  db: Database,
  input: { workspaceId: string; directoryId: string; overlapHours: number; now: Date },
): Promise<{ id: string; token: string; previous: string[] }> {
  const { workspaceId, directoryId, overlapHours, now } = input;
  if (!Number.isInteger(overlapHours) || overlapHours < 0 || overlapHours > MAX_TOKEN_OVERLAP_HOURS) {
    throw new ScimTokenError("invalid_argument", `The overlap must be a whole number of hours from 0 to ${MAX_TOKEN_OVERLAP_HOURS}`, { field: "overlap_hours" });
  }
  return db.transaction(async (tx) => {
    await tx.select({ id: scimDirectories.id }).from(scimDirectories).where(eq(scimDirectories.id, directoryId)).for("update");
    const working = await tx
      .select({ id: scimTokens.id, expiresAt: scimTokens.expiresAt })
      .from(scimTokens)
      .where(and(eq(scimTokens.workspaceId, workspaceId), eq(scimTokens.directoryId, directoryId), tokenActiveSql(now)));
    if (overlapHours > 0 && working.length >= MAX_ACTIVE_TOKENS) {
      throw new ScimTokenError("too_many_active_tokens", "Two tokens already work: revoke one before rotating with an overlap", { status: 409 });
    }
    const until = addMs(now, overlapHours * HOUR);
    for (const t of working) {
      const expiresAt = t.expiresAt && t.expiresAt < until ? t.expiresAt : until;
      if (overlapHours === 0) await tx.update(scimTokens).set({ revokedAt: now }).where(eq(scimTokens.id, t.id));
      else await tx.update(scimTokens).set({ expiresAt }).where(eq(scimTokens.id, t.id));
    }
    const token = TOKEN_PREFIX + randomToken(32);
    const id = newId();
    await tx.insert(scimTokens).values({ id, workspaceId, directoryId, tokenHash: sha256Hex(token), createdAt: now });
    return { id, token, previous: working.map((t) => t.id) };
  });
}

/** Revokes one token at once; false when it was not a working token of the directory. */
export async function revokeToken(db: Database, input: { workspaceId: string; directoryId: string; tokenId: string; now: Date }): Promise<boolean> {
  const revoked = await db
    .update(scimTokens)
    .set({ revokedAt: input.now })
    .where(and(eq(scimTokens.workspaceId, input.workspaceId), eq(scimTokens.directoryId, input.directoryId), eq(scimTokens.id, input.tokenId), tokenActiveSql(input.now)))
    .returning({ id: scimTokens.id });
  return revoked.length > 0;
}

/** What a SCIM request acts for once its token is accepted. */
export interface DirectoryAccess {
  directory: Directory;
  organization: { id: string; slug: string; name: string };
  tokenId: string;
}

/** How often a token's "last used" is written at most (a busy directory does not write it per request). */
const LAST_USED_EVERY_MS = 60_000;

/**
 * The directory a request's bearer token opens: a working token of the enabled directory of the
 * active organization the URL names, in this workspace; null for anything else (one answer for
 * all, 401). A token never reaches another organization's directory, nor another workspace's.
 */
export async function authenticateDirectory(db: Database, input: { workspaceId: string; organizationSlug: string; token: string | null; now: Date }): Promise<DirectoryAccess | null> {
  const { workspaceId, organizationSlug, token, now } = input;
  if (!token || !token.startsWith(TOKEN_PREFIX) || token.length > 128) return null;
  const [row] = await db
    .select({ directory: scimDirectories, organization: { id: organizations.id, slug: organizations.slug, name: organizations.name }, tokenId: scimTokens.id, lastUsedAt: scimTokens.lastUsedAt })
    .from(scimTokens)
    .innerJoin(scimDirectories, eq(scimDirectories.id, scimTokens.directoryId))
    .innerJoin(organizations, eq(organizations.id, scimDirectories.organizationId))
    .where(
      and(
        eq(scimTokens.tokenHash, sha256Hex(token)),
        eq(scimTokens.workspaceId, workspaceId),
        tokenActiveSql(now),
        eq(scimDirectories.enabled, true),
        eq(organizations.workspaceId, workspaceId),
        eq(organizations.slug, organizationSlug),
        eq(organizations.active, true),
      ),
    )
    .limit(1);
  if (!row) return null;
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > LAST_USED_EVERY_MS) {
    await db.update(scimTokens).set({ lastUsedAt: now }).where(and(eq(scimTokens.id, row.tokenId), or(isNull(scimTokens.lastUsedAt), lt(scimTokens.lastUsedAt, now))));
  }
  return { directory: row.directory, organization: row.organization, tokenId: row.tokenId };
}

/** The directory an organization's SCIM URL names, whatever its token (for its request log): null when none. */
export async function directoryBySlug(db: Database, workspaceId: string, organizationSlug: string): Promise<string | null> {
  const [row] = await db
    .select({ id: scimDirectories.id })
    .from(scimDirectories)
    .innerJoin(organizations, eq(organizations.id, scimDirectories.organizationId))
    .where(and(eq(scimDirectories.workspaceId, workspaceId), eq(organizations.workspaceId, workspaceId), eq(organizations.slug, organizationSlug)))
    .limit(1);
  return row?.id ?? null;
}
