/**
 * Identity linking: what a verified upstream identity signs in as (SPEC "Identity mapping").
 *
 * - Identities are keyed per source: the exact upstream `(iss, sub)` as known through one
 *   connection or one social provider. An identity already linked through THIS source signs in as
 *   its user. The same `(iss, sub)` through another source (another organization's connection
 *   with the same issuer, such as Google Workspace) is a new admission decision under that
 *   source's rule.
 * - Admission (no identity through this source yet): the upstream must vouch for an email address
 *   (`email_verified` strictly true; for an enterprise connection, an address in a domain its
 *   organization verified also counts). An address in a domain some organization verified is
 *   admitted only through that organization's own connection (not another organization's, not a
 *   social provider). An enterprise connection then admits by its organization's rule
 *   (`enterprise_connections.admission`): `verified_domains` (the default) only addresses in a
 *   domain the organization verified; `any_vouched` any vouched address. Then:
 *   - when no account has that address, the account is created just in time, with the identity;
 *   - when an account has it, nothing is linked on the email alone: the sign-in asks the user to
 *     prove that account (its password, passkey or an email code), and links only then
 *     (lib/sign-in/flow.ts `identify`).
 * - Through an enterprise connection, admission adds the user to the organization with the
 *   connection's default roles (only then). An administrator's later removal sticks: the
 *   connection then refuses the user rather than adding them back.
 */
import { and, desc, eq, inArray } from "drizzle-orm";
import type { Database } from "../../db/client";
import { enterpriseConnections, federatedIdentities, organizationMembers, roles, socialProviders, userRoles, users, type PendingFederatedLink } from "../../db/schema";
import { recordAudit } from "../audit/events";
import { newId } from "../crypto";
import type { EndpointContext } from "../http/context";
import { evidenceFor, type Evidence } from "../authn/evidence";
import { parseEmail, type EmailAddress } from "../authn/email-address";
import { verifiedDomainForEmail } from "./domains";
import type { LoadedProvider } from "./providers";
import type { UpstreamIdentity } from "./upstream/contract";

export type Resolution =
  /** `link` describes the identity it signed in with (its organization, connection, trusted MFA). */
  | { kind: "user"; userId: string; link: PendingFederatedLink }
  | { kind: "link"; link: PendingFederatedLink }
  | { kind: "refused"; reason: RefusalReason };

export type RefusalReason = "no_email" | "email_unverified" | "domain_of_organization" | "not_admitted" | "account_disabled" | "not_member";

/** The source an identity is keyed by (federated_identities.source): the connection or the social provider it came through. */
export function identitySource(link: Pick<PendingFederatedLink, "connectionId" | "socialProviderId">): string {
  return link.connectionId ? `connection:${link.connectionId}` : `social:${link.socialProviderId}`;
}

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
    email: shownEmail(identity),
    emailVerified: identity.emailVerified,
    name: identity.name,
    upstreamMfa: upstreamMfa(loaded, identity),
    upstreamAcr: identity.acr ? identity.acr.slice(0, 512) : null,
  };
}

/**
 * What a verified upstream identity would sign in as through this source, decided and not acted
 * on (nothing is written): the user it is already linked to, the existing account it would ask the
 * user to prove, a new account, or the reason it is refused. `resolveIdentity` acts on it; an
 * administrator's test of a connection (lib/federation/connection-test) only shows it.
 */
export type Admission =
  | { kind: "known"; userId: string; identityId: string }
  | { kind: "link"; userId: string }
  | { kind: "new"; address: EmailAddress }
  | { kind: "refused"; reason: RefusalReason };

export async function admissionOf(ctx: EndpointContext, loaded: LoadedProvider, identity: UpstreamIdentity): Promise<Admission> {
  const db = ctx.service.db;
  const wid = ctx.workspace.id;
  const source = identitySource({ connectionId: loaded.connection?.id ?? null, socialProviderId: loaded.socialProviderId });
  const [known] = await db
    .select({ identity: federatedIdentities, status: users.status })
    .from(federatedIdentities)
    .innerJoin(users, eq(users.id, federatedIdentities.userId))
    .where(and(eq(federatedIdentities.workspaceId, wid), eq(federatedIdentities.source, source), eq(federatedIdentities.issuer, identity.issuer), eq(federatedIdentities.subject, identity.subject)))
    .limit(1);
  if (known) {
    if (known.status !== "active") return { kind: "refused", reason: "account_disabled" };
    // Known through this connection, so admitted once: a missing membership was removed on purpose.
    if (loaded.connection && !(await isMember(ctx, loaded.connection.organizationId, known.identity.userId))) return { kind: "refused", reason: "not_member" };
    return { kind: "known", userId: known.identity.userId, identityId: known.identity.id };
  }

  // One normalization (lib/authn/email-address.ts) for admission, the account lookup and the new account's key:
  // another spelling of a local account's address (case, the domain's trailing dot) is that account.
  const address = parseEmail(identity.email);
  if (!address) return { kind: "refused", reason: "no_email" };
  const email = address.normalized;
  const [existing] = await db.select({ id: users.id, status: users.status }).from(users).where(and(eq(users.workspaceId, wid), eq(users.emailNormalized, email))).limit(1);
  const refusal = await admissionRefusal(ctx, loaded, identity.emailVerified, email, existing?.id ?? null);
  if (refusal) return { kind: "refused", reason: refusal };

  if (existing) {
    if (existing.status !== "active") return { kind: "refused", reason: "account_disabled" };
    return { kind: "link", userId: existing.id };
  }
  return { kind: "new", address };
}

export async function resolveIdentity(ctx: EndpointContext, loaded: LoadedProvider, identity: UpstreamIdentity): Promise<Resolution> {
  const db = ctx.service.db;
  const wid = ctx.workspace.id;
  const now = ctx.service.clock.now();
  const admission = await admissionOf(ctx, loaded, identity);
  if (admission.kind === "refused") return admission;
  if (admission.kind === "known") {
    await db
      .update(federatedIdentities)
      .set({ email: shownEmail(identity), emailVerified: identity.emailVerified, name: identity.name, upstreamAcr: identity.acr ? identity.acr.slice(0, 512) : null, lastSignInAt: now })
      .where(eq(federatedIdentities.id, admission.identityId));
    return { kind: "user", userId: admission.userId, link: pendingLinkOf(loaded, identity, admission.userId) };
  }
  if (admission.kind === "link") return { kind: "link", link: pendingLinkOf(loaded, identity, admission.userId) };

  // Just in time: the account, the identity and (through a connection) the membership, at once.
  const address = admission.address;
  const email = address.normalized;
  const userId = newId();
  const created = await db.transaction(async (tx) => {
    const [user] = await tx
      .insert(users)
      .values({ id: userId, workspaceId: wid, email: address.display, emailNormalized: email, emailVerified: identity.emailVerified, name: identity.name, passwordHash: null, status: "active", createdAt: now, updatedAt: now })
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
    await joinOrganization(tx, wid, now, pendingLinkOf(loaded, identity, userId));
    return true;
  }).catch((error) => {
    if (error instanceof ConcurrentFirstSignIn) return false;
    throw error;
  });
  // A concurrent first sign-in (same identity, or the address registered meanwhile): resolve again against what it wrote.
  if (!created) return resolveIdentity(ctx, loaded, identity);
  return { kind: "user", userId, link: pendingLinkOf(loaded, identity, userId) };
}

/** What an administrator reads for each refusal (the console's last failure, a connection test's page). */
const REFUSAL_REASON: Record<RefusalReason, string> = {
  no_email: "the identity provider sent no email address (check the attribute mapping)",
  email_unverified: "the address is not vouched for (outside the organization's verified domains)",
  domain_of_organization: "the address is in a domain another organization verified",
  not_admitted: "the address is outside the organization's verified domains (the connection admits verified domains only)",
  account_disabled: "the account is disabled",
  not_member: "the user was removed from the organization",
};

/** A refusal as the connection's last failure records it: the condition that failed, no assertion content. */
export function refusalText(identity: UpstreamIdentity, reason: RefusalReason): string {
  return `Refused ${identity.email ? "an address" : "an identity"}: ${REFUSAL_REASON[reason]}`;
}

class ConcurrentFirstSignIn extends Error {}

/** The upstream's address as shown (lib/authn/email-address.ts), or as sent when it is not one. */
function shownEmail(identity: UpstreamIdentity): string | null {
  return parseEmail(identity.email)?.display ?? identity.email;
}

/**
 * Whether this source admits a new identity with this address (null) or why not. The address must
 * be vouched for, must not be in another organization's verified domain, and through a connection
 * must meet its organization's rule (`verified_domains` by default, or `any_vouched`). The account
 * that already has the address (`accountId`), when an administrator made it a member of the
 * organization, is admitted whatever its domain: the sign-in still links the identity only after
 * the user proves that account.
 */
async function admissionRefusal(ctx: EndpointContext, loaded: LoadedProvider, emailVerified: boolean, email: string, accountId: string | null): Promise<RefusalReason | null> {
  // An address in a domain an organization verified is that organization's: only its own connection admits a new identity with it.
  const owner = (await verifiedDomainForEmail(ctx.service.db, ctx.workspace.id, email))?.organizationId ?? null;
  const connection = loaded.connection;
  if (owner !== null && owner !== connection?.organizationId) return "domain_of_organization";
  const inOwnDomain = connection !== null && owner === connection.organizationId;
  // Outside the organization's domains a verified-domains connection admits no one (however vouched), so that is the reason given.
  if (connection && connection.admission !== "any_vouched" && !inOwnDomain && !(accountId && (await isMember(ctx, connection.organizationId, accountId)))) return "not_admitted";
  if (!emailVerified && !inOwnDomain) return "email_unverified";
  return null;
}

function identityRow(workspaceId: string, userId: string, link: PendingFederatedLink, now: Date): typeof federatedIdentities.$inferInsert {
  return {
    id: newId(),
    workspaceId,
    userId,
    connectionId: link.connectionId,
    socialProviderId: link.socialProviderId,
    source: identitySource(link),
    issuer: link.issuer,
    subject: link.subject,
    email: link.email,
    emailVerified: link.emailVerified,
    name: link.name,
    upstreamAcr: link.upstreamAcr ?? null,
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
      .where(and(eq(federatedIdentities.workspaceId, wid), eq(federatedIdentities.source, identitySource(link)), eq(federatedIdentities.issuer, link.issuer), eq(federatedIdentities.subject, link.subject)))
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
  // Admitted by the connection's rule before the proof was asked for (resolveIdentity).
  if (link.connectionId && !(await isMember(ctx, link.organizationId!, link.userId))) await ctx.service.db.transaction((tx) => joinOrganization(tx, wid, now, link));
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

/** Membership of the connection's organization with its default roles (those that still exist), audited; within the caller's transaction. */
async function joinOrganization(tx: Database, workspaceId: string, now: Date, link: PendingFederatedLink): Promise<void> {
  const { connectionId, organizationId, userId } = link;
  if (!connectionId || !organizationId) return;
  const wid = workspaceId;
  const [connection] = await tx
    .select({ defaultRoleIds: enterpriseConnections.defaultRoleIds })
    .from(enterpriseConnections)
    .where(and(eq(enterpriseConnections.workspaceId, wid), eq(enterpriseConnections.id, connectionId)))
    .limit(1);
  const roleIds = connection?.defaultRoleIds ?? [];
  const added = await tx.insert(organizationMembers).values({ id: newId(), workspaceId: wid, organizationId, userId, origin: "sign_in", createdAt: now }).onConflictDoNothing().returning({ id: organizationMembers.id });
  // Already a member (added meanwhile): the default roles come with admission only, not on top of another membership.
  if (added.length === 0) return;
  const held = roleIds.length ? await tx.select({ id: roles.id }).from(roles).where(and(eq(roles.workspaceId, wid), inArray(roles.id, roleIds))) : [];
  if (held.length) {
    await tx
      .insert(userRoles)
      .values(held.map((r) => ({ id: newId(), workspaceId: wid, userId, roleId: r.id, organizationId, createdAt: now })))
      .onConflictDoNothing();
  }
  await recordAudit(tx, {
    workspaceId: wid,
    type: "authz.organization.member_added",
    subject: userId,
    data: { organization_id: organizationId, user_id: userId, via: "enterprise_connection", connection_id: connectionId, roles: held.map((r) => r.id) },
    at: now,
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
