/**
 * Identity linking: what a verified upstream identity signs in as (SPEC "Identity mapping").
 *
 * - An identity already linked, by the exact upstream `(iss, sub)`, signs in as its user.
 * - Otherwise the upstream must vouch for an email address (`email_verified` strictly true; for an
 *   enterprise connection, an address in a domain its organization verified also counts). An
 *   address in a domain some organization verified is admitted only through that organization's
 *   own connection (not another organization's, not a social provider). Then:
 *   - when no account has that address, the account is created just in time, with the identity;
 *   - when an account has it, nothing is linked on the email alone: the sign-in asks the user to
 *     prove that account (its password, passkey or an email code), and links only then
 *     (lib/sign-in/flow.ts `identify`).
 * - Through an enterprise connection, the first sign-in adds the user to the organization with the
 *   connection's default roles. An administrator's later removal sticks: the connection then
 *   refuses the user rather than adding them back.
 */
import { and, desc, eq, inArray } from "drizzle-orm";
import type { Database } from "../../db/client";
import { enterpriseConnections, federatedIdentities, organizationMembers, roles, socialProviders, userRoles, users, type PendingFederatedLink } from "../../db/schema";
import { recordAudit } from "../audit/events";
import { newId } from "../crypto";
import type { EndpointContext } from "../http/context";
import { evidenceFor, type Evidence } from "../authn/evidence";
import { verifiedDomainForEmail } from "./domains";
import type { LoadedProvider } from "./providers";
import type { UpstreamIdentity } from "./upstream/contract";

export type Resolution =
  /** `link` describes the identity it signed in with (its organization, connection, trusted MFA). */
  | { kind: "user"; userId: string; link: PendingFederatedLink }
  | { kind: "link"; link: PendingFederatedLink }
  | { kind: "refused"; reason: "no_email" | "email_unverified" | "domain_of_organization" | "account_disabled" | "not_member" };

/** Whether the upstream's MFA counts here: only through a connection configured to trust it, and only when its `amr` says "mfa". */
function upstreamMfa(loaded: LoadedProvider, identity: UpstreamIdentity): boolean {
  return loaded.connection?.trustUpstreamMfa === true && identity.amr.includes("mfa");
}

/**
 * The evidence a federated sign-in records: `federated_mfa` when the upstream's MFA is trusted;
 * its factor is `connection:<id>` or `social:<id>` (lib/authn/policy.ts reads which).
 */
export function federatedEvidence(at: Date, link: Pick<PendingFederatedLink, "connectionId" | "socialProviderId" | "upstreamMfa">): Evidence {
  const factor = link.connectionId ? `connection:${link.connectionId}` : `social:${link.socialProviderId}`;
  return evidenceFor(link.upstreamMfa ? "federated_mfa" : "federated", at, factor);
}

export function pendingLinkOf(loaded: LoadedProvider, identity: UpstreamIdentity, userId: string): PendingFederatedLink {
  return {
    userId,
    connectionId: loaded.connection?.id ?? null,
    socialProviderId: loaded.socialProviderId,
    organizationId: loaded.connection?.organizationId ?? null,
    issuer: identity.issuer,
    subject: identity.subject,
    email: identity.email,
    emailVerified: identity.emailVerified,
    name: identity.name,
    upstreamMfa: upstreamMfa(loaded, identity),
  };
}

export async function resolveIdentity(ctx: EndpointContext, loaded: LoadedProvider, identity: UpstreamIdentity): Promise<Resolution> {
  const db = ctx.service.db;
  const wid = ctx.workspace.id;
  const now = ctx.service.clock.now();
  const [known] = await db
    .select({ identity: federatedIdentities, status: users.status })
    .from(federatedIdentities)
    .innerJoin(users, eq(users.id, federatedIdentities.userId))
    .where(and(eq(federatedIdentities.workspaceId, wid), eq(federatedIdentities.issuer, identity.issuer), eq(federatedIdentities.subject, identity.subject)))
    .limit(1);
  if (known) {
    if (known.status !== "active") return { kind: "refused", reason: "account_disabled" };
    const link = pendingLinkOf(loaded, identity, known.identity.userId);
    if (loaded.connection) {
      // First time through this connection: join its organization; afterwards a missing membership was removed on purpose.
      const firstThroughConnection = known.identity.connectionId !== loaded.connection.id;
      const member = await isMember(ctx, loaded.connection.organizationId, known.identity.userId);
      if (!member && !firstThroughConnection) return { kind: "refused", reason: "not_member" };
      if (!member) await joinOrganization(ctx, link);
    }
    await db
      .update(federatedIdentities)
      .set({
        email: identity.email,
        emailVerified: identity.emailVerified,
        name: identity.name,
        lastSignInAt: now,
        ...(loaded.connection ? { connectionId: loaded.connection.id } : { socialProviderId: loaded.socialProviderId }),
      })
      .where(eq(federatedIdentities.id, known.identity.id));
    return { kind: "user", userId: known.identity.userId, link };
  }

  const email = identity.email?.trim().toLowerCase() ?? null;
  if (!email || !/^[^@\s]+@[^@\s]+$/.test(email) || email.length > 320) return { kind: "refused", reason: "no_email" };
  // An address in a domain an organization verified is that organization's: only its own connection admits a new identity with it.
  const owner = (await verifiedDomainForEmail(ctx.service.db, ctx.workspace.id, email))?.organizationId ?? null;
  if (owner !== null && owner !== loaded.connection?.organizationId) return { kind: "refused", reason: "domain_of_organization" };
  const vouched = identity.emailVerified || (loaded.connection !== null && owner === loaded.connection.organizationId);
  if (!vouched) return { kind: "refused", reason: "email_unverified" };

  const [existing] = await db.select({ id: users.id, status: users.status }).from(users).where(and(eq(users.workspaceId, wid), eq(users.emailNormalized, email))).limit(1);
  if (existing) {
    if (existing.status !== "active") return { kind: "refused", reason: "account_disabled" };
    return { kind: "link", link: pendingLinkOf(loaded, identity, existing.id) };
  }

  // Just in time: the account, the identity and (through a connection) the membership, at once.
  const userId = newId();
  const created = await db.transaction(async (tx) => {
    const [user] = await tx
      .insert(users)
      .values({ id: userId, workspaceId: wid, email, emailNormalized: email, emailVerified: identity.emailVerified, name: identity.name, passwordHash: null, status: "active", createdAt: now, updatedAt: now })
      .onConflictDoNothing()
      .returning({ id: users.id });
    if (!user) return false;
    const [linked] = await tx
      .insert(federatedIdentities)
      .values(identityRow(wid, userId, pendingLinkOf(loaded, identity, userId), now))
      .onConflictDoNothing()
      .returning({ id: federatedIdentities.id });
    if (!linked) throw new ConcurrentFirstSignIn();
    await recordAudit(tx, { workspaceId: wid, type: "user.created", subject: userId, data: { email, via: loaded.connection ? "enterprise_connection" : "social_provider", source: loaded.connection?.id ?? loaded.socialProviderId }, at: now });
    return true;
  }).catch((error) => {
    if (error instanceof ConcurrentFirstSignIn) return false;
    throw error;
  });
  // A concurrent first sign-in (same identity, or the address registered meanwhile): resolve again against what it wrote.
  if (!created) return resolveIdentity(ctx, loaded, identity);
  const link = pendingLinkOf(loaded, identity, userId);
  if (loaded.connection) await joinOrganization(ctx, link);
  return { kind: "user", userId, link };
}

class ConcurrentFirstSignIn extends Error {}

function identityRow(workspaceId: string, userId: string, link: PendingFederatedLink, now: Date): typeof federatedIdentities.$inferInsert {
  return {
    id: newId(),
    workspaceId,
    userId,
    connectionId: link.connectionId,
    socialProviderId: link.socialProviderId,
    source: link.connectionId ? `connection:${link.connectionId}` : `social:${link.socialProviderId}`,
    issuer: link.issuer,
    subject: link.subject,
    email: link.email,
    emailVerified: link.emailVerified,
    name: link.name,
    createdAt: now,
    lastSignInAt: now,
  };
}

/**
 * Links a pending upstream identity to the account the user has just proved. Refused (false) when
 * the identity was linked to another account meanwhile.
 */
export async function linkProvedAccount(ctx: EndpointContext, link: PendingFederatedLink): Promise<boolean> {
  const now = ctx.service.clock.now();
  const wid = ctx.workspace.id;
  const inserted = await ctx.service.db.insert(federatedIdentities).values(identityRow(wid, link.userId, link, now)).onConflictDoNothing().returning({ id: federatedIdentities.id });
  if (inserted.length === 0) {
    const [owner] = await ctx.service.db
      .select({ userId: federatedIdentities.userId })
      .from(federatedIdentities)
      .where(and(eq(federatedIdentities.workspaceId, wid), eq(federatedIdentities.issuer, link.issuer), eq(federatedIdentities.subject, link.subject)))
      .limit(1);
    if (owner?.userId !== link.userId) return false;
  } else {
    await recordAudit(ctx.service.db, {
      workspaceId: wid,
      type: "federation.identity_linked",
      subject: link.userId,
      data: { issuer: link.issuer, subject: link.subject, source: link.connectionId ?? link.socialProviderId, proved_by: "local_sign_in" },
      at: now,
    });
  }
  if (link.connectionId && !(await isMember(ctx, link.organizationId!, link.userId))) await joinOrganization(ctx, link);
  return true;
}

async function isMember(ctx: EndpointContext, organizationId: string, userId: string): Promise<boolean> {
  const [row] = await ctx.service.db
    .select({ id: organizationMembers.id })
    .from(organizationMembers)
    .where(and(eq(organizationMembers.workspaceId, ctx.workspace.id), eq(organizationMembers.organizationId, organizationId), eq(organizationMembers.userId, userId)))
    .limit(1);
  return row !== undefined;
}

/** Membership of the connection's organization with its default roles (those that still exist), audited. */
async function joinOrganization(ctx: EndpointContext, link: PendingFederatedLink): Promise<void> {
  const { connectionId, organizationId, userId } = link;
  if (!connectionId || !organizationId) return;
  const wid = ctx.workspace.id;
  const now = ctx.service.clock.now();
  const [connection] = await ctx.service.db
    .select({ defaultRoleIds: enterpriseConnections.defaultRoleIds })
    .from(enterpriseConnections)
    .where(and(eq(enterpriseConnections.workspaceId, wid), eq(enterpriseConnections.id, connectionId)))
    .limit(1);
  const roleIds = connection?.defaultRoleIds ?? [];
  await ctx.service.db.transaction(async (tx) => {
    const added = await tx.insert(organizationMembers).values({ id: newId(), workspaceId: wid, organizationId, userId, origin: "sign_in", createdAt: now }).onConflictDoNothing().returning({ id: organizationMembers.id });
    const held = roleIds.length ? await tx.select({ id: roles.id }).from(roles).where(and(eq(roles.workspaceId, wid), inArray(roles.id, roleIds))) : [];
    if (held.length) {
      await tx
        .insert(userRoles)
        .values(held.map((r) => ({ id: newId(), workspaceId: wid, userId, roleId: r.id, organizationId, createdAt: now })))
        .onConflictDoNothing();
    }
    if (added.length > 0) {
      await recordAudit(tx, {
        workspaceId: wid,
        type: "authz.organization.member_added",
        subject: userId,
        data: { organization_id: organizationId, user_id: userId, via: "enterprise_connection", connection_id: connectionId, roles: held.map((r) => r.id) },
        at: now,
      });
    }
  });
}

export interface LinkedIdentity {
  id: string;
  /** The connection's or provider's name; null when it was removed since. */
  sourceName: string | null;
  kind: "connection" | "social" | "removed";
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  createdAt: Date;
  lastSignInAt: Date | null;
}

/** The upstream identities linked to a user (console), newest first. */
export async function listLinkedIdentities(db: Database, workspaceId: string, userId: string): Promise<LinkedIdentity[]> {
  const rows = await db
    .select({ identity: federatedIdentities, connectionName: enterpriseConnections.name, providerName: socialProviders.name })
    .from(federatedIdentities)
    .leftJoin(enterpriseConnections, eq(enterpriseConnections.id, federatedIdentities.connectionId))
    .leftJoin(socialProviders, eq(socialProviders.id, federatedIdentities.socialProviderId))
    .where(and(eq(federatedIdentities.workspaceId, workspaceId), eq(federatedIdentities.userId, userId)))
    .orderBy(desc(federatedIdentities.createdAt));
  return rows.map(({ identity: i, connectionName, providerName }) => ({
    id: i.id,
    sourceName: connectionName ?? providerName ?? null,
    kind: connectionName ? "connection" : providerName ? "social" : "removed",
    issuer: i.issuer,
    subject: i.subject,
    email: i.email,
    emailVerified: i.emailVerified,
    createdAt: i.createdAt,
    lastSignInAt: i.lastSignInAt,
  }));
}

/**
 * Unlinks an upstream identity from a user: signing in through it no longer reaches the account
 * (a later sign-in with it asks to prove the account again when the email matches). Sessions
 * already open stay; end them separately. Returns the removed identity, or null.
 */
export async function unlinkIdentity(db: Database, workspaceId: string, userId: string, identityId: string): Promise<{ issuer: string; subject: string } | null> {
  const [removed] = await db
    .delete(federatedIdentities)
    .where(and(eq(federatedIdentities.workspaceId, workspaceId), eq(federatedIdentities.userId, userId), eq(federatedIdentities.id, identityId)))
    .returning({ issuer: federatedIdentities.issuer, subject: federatedIdentities.subject });
  return removed ?? null;
}
