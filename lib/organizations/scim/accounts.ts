/**
 * What a provisioned user is in Latchkey: an account of the workspace, a member of the directory's
 * organization while the directory says `active`, and (through the organization's connection) the
 * identity the connection signs them in as.
 *
 * - Matching: a provisioned user is the account the directory's connection already knows by the
 *   subject the directory sends (the attribute its settings name: `externalId` or `userName`),
 *   never an account found by its email address alone. An address that an account of the
 *   workspace already has, with no identity through the connection, is refused (409): its owner
 *   links it by signing in through the connection once (lib/federation/identities.ts proves the
 *   account first), and the directory's next attempt then finds it.
 * - Otherwise the directory creates the account (`managed`): no password, its address verified
 *   when it is in one of the organization's verified domains, and the connection's identity made
 *   at once, so that the first sign-in through the connection is this account.
 * - Addresses: only in the organization's verified domains, unless its directory allows any
 *   address (never one in another organization's verified domain).
 * - `active: false` and deletion end the membership and the sessions and grants made through the
 *   organization at once; an account the directory created is disabled (deleted, on deletion) and
 *   loses every session, grant and portal session.
 */
import { and, eq, inArray, notInArray, sql } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { accessTokens, enterpriseConnections, federatedIdentities, organizationMembers, roles, scimGroupMembers, scimGroups, scimUsers, userRoles, users } from "../../../db/schema";
import { recordAudit } from "../../audit/events";
import { endAccountSessions } from "../../authn/hosted-session";
import type { EmailAddress } from "../../authn/email-address";
import { newId } from "../../crypto";
import { verifiedDomainForEmail } from "../../federation/domains";
import { identityIssuerOf } from "../../federation/upstream";
import { badRequest, conflict } from "./errors";
import type { DirectoryAccess } from "./directory";

/** Why a session or grant ended, in the audit log and on the session. */
export const DEPROVISIONED = "directory_deprovisioned";

/** The connection the directory's users sign in through, as its identities are keyed: null when the directory has none (or it was removed). */
async function connectionOf(db: Database, access: DirectoryAccess): Promise<{ id: string; issuer: string } | null> {
  const id = access.directory.connectionId;
  if (!id) return null;
  const [row] = await db
    .select()
    .from(enterpriseConnections)
    .where(and(eq(enterpriseConnections.workspaceId, access.directory.workspaceId), eq(enterpriseConnections.id, id), eq(enterpriseConnections.organizationId, access.organization.id)))
    .limit(1);
  return row ? { id: row.id, issuer: identityIssuerOf(row) } : null;
}

export const identitySourceOf = (connectionId: string) => `connection:${connectionId}`;

/** Refuses an address the directory may not provision; returns whether it is in one of the organization's verified domains. */
export async function admitAddress(db: Database, access: DirectoryAccess, email: EmailAddress): Promise<boolean> {
  const owner = await verifiedDomainForEmail(db, access.directory.workspaceId, email.normalized);
  if (owner && owner.organizationId !== access.organization.id) {
    throw badRequest("invalidValue", `${email.display} is in a domain another organization verified`);
  }
  if (!owner && !access.directory.anyDomain) {
    throw badRequest("invalidValue", `${email.display} is not in one of the organization's verified domains`);
  }
  return owner !== null;
}

export interface ProvisionedAccount {
  userId: string;
  managed: boolean;
}

/**
 * The account a new provisioned user is: the one the connection knows by `subject`, or a new one
 * the directory creates. Refuses an address another account has (409).
 */
export async function accountFor(
  db: Database,
  access: DirectoryAccess,
  input: { subject: string | null; email: EmailAddress; name: string | null; active: boolean; now: Date },
): Promise<ProvisionedAccount> {
  const wid = access.directory.workspaceId;
  const inOwnDomain = await admitAddress(db, access, input.email);
  const connection = await connectionOf(db, access);
  if (connection && input.subject) {
    const [known] = await db
      .select({ userId: federatedIdentities.userId })
      .from(federatedIdentities)
      .where(
        and(
          eq(federatedIdentities.workspaceId, wid),
          eq(federatedIdentities.source, identitySourceOf(connection.id)),
          eq(federatedIdentities.issuer, connection.issuer),
          eq(federatedIdentities.subject, input.subject),
        ),
      )
      .limit(1);
    if (known) return { userId: known.userId, managed: false };
  }
  const [taken] = await db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.workspaceId, wid), eq(users.emailNormalized, input.email.normalized)))
    .limit(1);
  if (taken) {
    throw conflict(
      `An account with ${input.email.display} already exists and is not known through the organization's connection: its owner links it by signing in through the connection once`,
    );
  }
  const userId = newId();
  await db.insert(users).values({
    id: userId,
    workspaceId: wid,
    email: input.email.display,
    emailNormalized: input.email.normalized,
    emailVerified: inOwnDomain,
    name: input.name,
    passwordHash: null,
    status: input.active ? "active" : "disabled",
    createdAt: input.now,
    updatedAt: input.now,
  });
  if (connection && input.subject) await linkIdentity(db, access, connection, { userId, subject: input.subject, email: input.email, name: input.name, now: input.now });
  await recordAudit(db, { workspaceId: wid, type: "user.created", subject: userId, data: { email: input.email.normalized, via: "directory", source: access.directory.id }, at: input.now });
  return { userId, managed: true };
}

async function linkIdentity(
  db: Database,
  access: DirectoryAccess,
  connection: { id: string; issuer: string },
  input: { userId: string; subject: string; email: EmailAddress; name: string | null; now: Date },
): Promise<void> {
  await db
    .insert(federatedIdentities)
    .values({
      id: newId(),
      workspaceId: access.directory.workspaceId,
      userId: input.userId,
      connectionId: connection.id,
      socialProviderId: null,
      source: identitySourceOf(connection.id),
      issuer: connection.issuer,
      subject: input.subject,
      email: input.email.display,
      emailVerified: false,
      name: input.name,
      createdAt: input.now,
      lastSignInAt: null,
    })
    .onConflictDoNothing();
}

/**
 * A provisioned user's subject changed (the attribute the settings name): the identity the
 * directory made for its account follows, so that the next sign-in through the connection with
 * the new subject is still this account.
 */
export async function moveSubject(db: Database, access: DirectoryAccess, input: { userId: string; from: string | null; to: string | null; email: EmailAddress; name: string | null; now: Date }): Promise<void> {
  if (input.from === input.to) return;
  const connection = await connectionOf(db, access);
  if (!connection) return;
  const source = identitySourceOf(connection.id);
  if (input.from !== null) {
    await db
      .delete(federatedIdentities)
      .where(
        and(
          eq(federatedIdentities.workspaceId, access.directory.workspaceId),
          eq(federatedIdentities.userId, input.userId),
          eq(federatedIdentities.source, source),
          eq(federatedIdentities.issuer, connection.issuer),
          eq(federatedIdentities.subject, input.from),
        ),
      );
  }
  if (input.to !== null) await linkIdentity(db, access, connection, { userId: input.userId, subject: input.to, email: input.email, name: input.name, now: input.now });
}

/** Changes a managed account's address and name as the directory says (an address another account has is refused). */
export async function updateManagedAccount(db: Database, access: DirectoryAccess, input: { userId: string; email: EmailAddress; name: string | null; now: Date }): Promise<void> {
  const inOwnDomain = await admitAddress(db, access, input.email);
  const [other] = await db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.workspaceId, access.directory.workspaceId), eq(users.emailNormalized, input.email.normalized), sql`${users.id} <> ${input.userId}`))
    .limit(1);
  if (other) throw conflict(`Another account already has ${input.email.display}`);
  const [current] = await db.select({ emailNormalized: users.emailNormalized }).from(users).where(eq(users.id, input.userId)).limit(1);
  const changed = current?.emailNormalized !== input.email.normalized;
  await db
    .update(users)
    .set({
      email: input.email.display,
      emailNormalized: input.email.normalized,
      name: input.name,
      updatedAt: input.now,
      // A new address is verified only in the organization's own domains; the same address keeps what it had.
      ...(changed ? { emailVerified: inOwnDomain } : {}),
    })
    .where(and(eq(users.workspaceId, access.directory.workspaceId), eq(users.id, input.userId)));
}

/**
 * Makes the provisioned user's access what the directory says: active, a member of the
 * organization (with the roles its groups give); inactive, no membership, no organization roles,
 * and their sessions and grants through the organization ended (a managed account: disabled,
 * with every session and grant ended). Returns what was ended.
 */
export async function applyActive(
  db: Database,
  access: DirectoryAccess,
  input: { scimUserId: string; userId: string; managed: boolean; active: boolean; now: Date },
): Promise<{ sessions: number; grants: number } | null> {
  const wid = access.directory.workspaceId;
  const organizationId = access.organization.id;
  if (input.active) {
    await db.insert(organizationMembers).values({ id: newId(), workspaceId: wid, organizationId, userId: input.userId, origin: "directory", createdAt: input.now }).onConflictDoNothing();
    if (input.managed) await db.update(users).set({ status: "active", updatedAt: input.now }).where(and(eq(users.workspaceId, wid), eq(users.id, input.userId), eq(users.status, "disabled")));
    await syncRoles(db, access, [input.scimUserId], input.now);
    return null;
  }
  await db.delete(organizationMembers).where(and(eq(organizationMembers.workspaceId, wid), eq(organizationMembers.organizationId, organizationId), eq(organizationMembers.userId, input.userId)));
  await db.delete(userRoles).where(and(eq(userRoles.workspaceId, wid), eq(userRoles.organizationId, organizationId), eq(userRoles.userId, input.userId)));
  if (input.managed) {
    await db.update(users).set({ status: "disabled", updatedAt: input.now }).where(and(eq(users.workspaceId, wid), eq(users.id, input.userId)));
    return endAccountSessions(db, { workspaceId: wid, userId: input.userId, now: input.now, reason: DEPROVISIONED });
  }
  return endAccountSessions(db, { workspaceId: wid, userId: input.userId, now: input.now, reason: DEPROVISIONED, organizationId });
}

/** Deletes an account the directory created, with everything it holds (as the console's deletion does: access tokens have no foreign keys). */
export async function deleteManagedAccount(db: Database, workspaceId: string, userId: string): Promise<void> {
  await db.delete(accessTokens).where(and(eq(accessTokens.workspaceId, workspaceId), eq(accessTokens.userId, userId)));
  await db.delete(users).where(and(eq(users.workspaceId, workspaceId), eq(users.id, userId)));
}

/**
 * The organization roles of provisioned users as their groups give them (the directory's mapping
 * from group display names to roles): for each active member, the roles the mapping manages are
 * exactly those of their groups; roles the mapping does not name are left as an administrator set them.
 */
export async function syncRoles(db: Database, access: DirectoryAccess, scimUserIds: readonly string[], now: Date): Promise<void> {
  const mapping = access.directory.groupRoles;
  const named = [...new Set(mapping.flatMap((m) => m.roleIds))];
  if (named.length === 0 || scimUserIds.length === 0) return;
  const wid = access.directory.workspaceId;
  // A role deleted since the mapping was saved gives nothing.
  const managed = (await db.select({ id: roles.id }).from(roles).where(and(eq(roles.workspaceId, wid), inArray(roles.id, named)))).map((r) => r.id);
  if (managed.length === 0) return;
  const organizationId = access.organization.id;
  const byGroup = new Map(mapping.map((m) => [m.group.toLowerCase(), m.roleIds]));
  const rows = await db
    .select({ scimUserId: scimUsers.id, userId: scimUsers.userId, active: scimUsers.active, group: scimGroups.displayNameKey })
    .from(scimUsers)
    .leftJoin(scimGroupMembers, eq(scimGroupMembers.scimUserId, scimUsers.id))
    .leftJoin(scimGroups, eq(scimGroups.id, scimGroupMembers.groupId))
    .where(and(eq(scimUsers.workspaceId, wid), eq(scimUsers.directoryId, access.directory.id), inArray(scimUsers.id, [...scimUserIds])));
  const wanted = new Map<string, { active: boolean; roles: Set<string> }>();
  for (const r of rows) {
    const entry = wanted.get(r.userId) ?? { active: r.active, roles: new Set<string>() };
    for (const role of (r.group && byGroup.get(r.group)) || []) if (managed.includes(role)) entry.roles.add(role);
    wanted.set(r.userId, entry);
  }
  for (const [userId, { active, roles }] of wanted) {
    const keep = active ? [...roles] : [];
    await db
      .delete(userRoles)
      .where(
        and(
          eq(userRoles.workspaceId, wid),
          eq(userRoles.organizationId, organizationId),
          eq(userRoles.userId, userId),
          inArray(userRoles.roleId, managed),
          keep.length ? notInArray(userRoles.roleId, keep) : undefined,
        ),
      );
    if (keep.length) {
      await db
        .insert(userRoles)
        .values(keep.map((roleId) => ({ id: newId(), workspaceId: wid, userId, roleId, organizationId, createdAt: now })))
        .onConflictDoNothing();
    }
  }
}
