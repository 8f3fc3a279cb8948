/**
 * Organization invitations: who may invite, and inviting, sending again, withdrawing and listing.
 * Plain functions over a database handle (the caller's transaction) and an actor, so the console
 * (./console.ts) and a hosted page of an organization's administrators call the same rules:
 *
 * - An operator's authority in the workspace is the console's to check (runOperation: the
 *   operator's role, in the operation's transaction). An organization administrator's is checked
 *   here, in the same transaction as the change: an active account of the workspace, a member of
 *   this organization marked administrator (`isOrganizationAdministrator`). Nobody else may act.
 * - An invitation names one address (normalized once, lib/authn/email-address.ts), organization
 *   roles of the workspace, and whether the member is an administrator. At most one is pending per
 *   organization and address: inviting again replaces the pending one's roles and link (a new
 *   secret, the old link dead), as sending it again does. Nothing here creates an account: that
 *   happens only when the link, sent to the address alone, is used (./acceptance.ts).
 * - The link's secret is 32 random bytes, only its SHA-256 stored; it is never shown to the
 *   inviter, only mailed to the address. Valid INVITATION_TTL_MS from when it was sent.
 * - Sends (and sends again) count on INVITATIONS_SENT per organization: the caller obtains the
 *   allowance (`allowInvitationSend`) before its transaction, and inviting requires it.
 */
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { clients, organizationInvitations, organizationMembers, organizations, roles, users, workspaces } from "../../../db/schema";
import { recordAudit } from "../../audit/events";
import { normalizeEmail } from "../../authn/email-address";
import { emailAvailable, sendMail } from "../../authn/email/transport";
import { addMs } from "../../clock";
import { newId, randomToken, sha256Hex } from "../../crypto";
import { issuerFor } from "../../http/context";
import { DEFAULT_LOCALE, isLocale, type Locale } from "../../i18n/locales";
import { guard } from "../../limits/declarations";
import type { Service } from "../../service";
import { fieldError, formError } from "../../surfaces/operation";
import { INVITATION_TTL_MS, INVITATIONS_SENT } from "./limits";
import { invitationMessage } from "./messages";

/** Who acts: an operator of the workspace (the console checked their role), or an administrator of the organization. */
export type InvitationActor = { kind: "operator"; userId: string } | { kind: "organization_administrator"; userId: string };

/** The hosted acceptance page, below the workspace's issuer. */
export const INVITATION_PAGE_PATH = "/invitation";

/** The link an invitation is mailed with: the acceptance page under the workspace's issuer, the secret in the query (the page sends no Referer). */
export function invitationUrl(publicUrl: string, workspaceId: string, token: string): string {
  return `${issuerFor(publicUrl, workspaceId)}${INVITATION_PAGE_PATH}?token=${encodeURIComponent(token)}`;
}

/**
 * Whether `userId` administers organization `organizationId` of workspace `workspaceId`: an active
 * account of the workspace, a member of the organization marked administrator. The one rule a page
 * of an organization's administrators asks.
 */
export async function isOrganizationAdministrator(db: Database, workspaceId: string, organizationId: string, userId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: organizationMembers.id })
    .from(organizationMembers)
    .innerJoin(users, and(eq(users.id, organizationMembers.userId), eq(users.workspaceId, organizationMembers.workspaceId)))
    .where(
      and(
        eq(organizationMembers.workspaceId, workspaceId),
        eq(organizationMembers.organizationId, organizationId),
        eq(organizationMembers.userId, userId),
        eq(organizationMembers.administrator, true),
        eq(users.status, "active"),
      ),
    )
    .limit(1);
  return row !== undefined;
}

/** Refuses an actor who may not manage this organization's invitations (an operator's role was checked by the console). */
async function authorize(db: Database, workspaceId: string, organizationId: string, actor: InvitationActor): Promise<void> {
  if (actor.kind === "operator") return;
  if (!(await isOrganizationAdministrator(db, workspaceId, organizationId, actor.userId))) throw formError("Only an administrator of this organization can manage its invitations");
}

async function organizationOf(db: Database, workspaceId: string, organizationId: string) {
  const [org] = await db
    .select({ id: organizations.id, slug: organizations.slug, name: organizations.name, active: organizations.active, workspaceName: workspaces.name })
    .from(organizations)
    .innerJoin(workspaces, eq(workspaces.id, organizations.workspaceId))
    .where(and(eq(organizations.workspaceId, workspaceId), eq(organizations.id, organizationId)))
    .limit(1);
  return org ?? null;
}

/** The language of the account that has the address, when it has signed in; else the inviter's. */
async function localeFor(db: Database, workspaceId: string, emailNormalized: string, fallback: Locale): Promise<Locale> {
  const [row] = await db
    .select({ locale: users.locale })
    .from(users)
    .where(and(eq(users.workspaceId, workspaceId), eq(users.emailNormalized, emailNormalized)))
    .limit(1);
  return isLocale(row?.locale) ? row.locale : fallback;
}

export interface InviteInput {
  workspaceId: string;
  organizationId: string;
  actor: InvitationActor;
  email: string;
  /** Roles (ids) of the workspace the member gets in the organization. */
  roleIds: readonly string[];
  administrator: boolean;
  /** The application (client_id) the confirmation page offers to continue to; optional. */
  clientId?: string | null;
  /** The email's language when no account has the address yet (the inviter's). */
  locale?: Locale;
}

export interface Sent {
  invitationId: string;
  email: string;
  organizationSlug: string;
  roleIds: string[];
  administrator: boolean;
  expiresAt: Date;
  /** Whether a pending invitation of the address was replaced (its link is dead). */
  replaced: boolean;
  /** Whether the message was handed to the mail transport (false when this server cannot send email). */
  emailed: boolean;
}

/**
 * A send counted on INVITATIONS_SENT: what inviting and sending again require, obtained before the
 * caller's transaction (the limiter keeps its own connection) from `allowInvitationSend`, so no
 * send goes uncounted.
 */
export interface SendAllowance {
  readonly workspaceId: string;
  readonly organizationId: string;
  readonly counted: true;
}

/**
 * Counts one send for the organization on INVITATIONS_SENT, before the transaction that invites:
 * refused (over the form) once the organization's hourly number is reached, or when the actor may
 * not manage its invitations (checked again within the transaction).
 */
export async function allowInvitationSend(service: Service, input: { workspaceId: string; organizationId: string; actor: InvitationActor }): Promise<SendAllowance> {
  const { workspaceId, organizationId } = input;
  await authorize(service.db, workspaceId, organizationId, input.actor);
  const gate = await guard(service.limiter, service.config.rateLimits, INVITATIONS_SENT, { workspaceId, address: "-", account: organizationId });
  if (!gate.allowed) throw formError(`Too many invitations were sent for this organization in the last hour. Try again in ${Math.ceil(gate.retryAfterSeconds / 60)} minutes.`);
  await gate.record();
  return { workspaceId, organizationId, counted: true };
}

function requireAllowance(allowance: SendAllowance, workspaceId: string, organizationId: string): void {
  if (allowance.workspaceId !== workspaceId || allowance.organizationId !== organizationId || allowance.counted !== true) throw new TypeError("an invitation is sent only under its organization's allowance");
}

function mail(service: Service, p: { workspaceId: string; workspaceName: string; organization: string; to: string; locale: Locale; administrator: boolean; token: string; expiresAt: Date }): boolean {
  if (!emailAvailable(service.config)) return false;
  const url = invitationUrl(service.config.publicUrl, p.workspaceId, p.token);
  sendMail(
    { service, workspace: { id: p.workspaceId, name: p.workspaceName } },
    invitationMessage({ to: p.to, locale: p.locale, organization: p.organization, workspace: p.workspaceName, administrator: p.administrator, url, expiresAt: p.expiresAt }),
  );
  return true;
}

const lockAddress = (db: Database, workspaceId: string, organizationId: string, emailNormalized: string) =>
  db.execute(sql`select pg_advisory_xact_lock(hashtext(${`latchkey:organization-invitation:${workspaceId}:${organizationId}:${emailNormalized}`}))`);

/** The organization a send (an invitation, or one sent again) is for: counted, the actor's authority checked, existing and active. */
async function organizationToInviteTo(db: Database, input: { workspaceId: string; organizationId: string; actor: InvitationActor }, allowance: SendAllowance) {
  const { workspaceId: wid, organizationId, actor } = input;
  requireAllowance(allowance, wid, organizationId);
  await authorize(db, wid, organizationId, actor);
  const org = await organizationOf(db, wid, organizationId);
  if (!org) throw formError("This organization no longer exists");
  if (!org.active) throw formError("This organization is inactive: activate it before inviting people");
  return org;
}

/**
 * Invites `email` to the organization, within the caller's transaction `db`: refused beside its
 * field for an address that is already a member, or for roles that are not the workspace's. A
 * pending invitation of the address is replaced (its roles, its link: the old one dies). Mails the
 * link to the address.
 */
export async function inviteToOrganization(service: Service, db: Database, input: InviteInput, allowance: SendAllowance): Promise<Sent> {
  const { workspaceId: wid, organizationId, actor } = input;
  const org = await organizationToInviteTo(db, input, allowance);
  const normalized = normalizeEmail(input.email);
  if (!normalized) throw fieldError("email", "Enter an email address");
  const roleIds = [...new Set(input.roleIds)];
  if (roleIds.length > 0) {
    const known = await db.select({ id: roles.id }).from(roles).where(and(eq(roles.workspaceId, wid), inArray(roles.id, roleIds)));
    if (known.length !== roleIds.length) throw fieldError("role_ids", "Choose roles of this workspace");
  }
  let clientPk: string | null = null;
  if (input.clientId) {
    const [client] = await db.select({ id: clients.id, type: clients.type }).from(clients).where(and(eq(clients.workspaceId, wid), eq(clients.clientId, input.clientId))).limit(1);
    if (!client || client.type === "M2M") throw fieldError("client_id", "Choose an application of this workspace that people sign in to");
    clientPk = client.id;
  }
  await lockAddress(db, wid, organizationId, normalized);
  const [member] = await db
    .select({ id: organizationMembers.id })
    .from(organizationMembers)
    .innerJoin(users, eq(users.id, organizationMembers.userId))
    .where(and(eq(organizationMembers.workspaceId, wid), eq(organizationMembers.organizationId, organizationId), eq(users.workspaceId, wid), eq(users.emailNormalized, normalized)))
    .limit(1);
  if (member) throw fieldError("email", "This address is already a member of the organization");

  const now = service.clock.now();
  const token = randomToken(32);
  const expiresAt = addMs(now, INVITATION_TTL_MS);
  const fields = {
    email: input.email.trim(),
    roleIds,
    administrator: input.administrator,
    clientPk,
    tokenHash: sha256Hex(token),
    invitedByKind: actor.kind,
    invitedBy: actor.userId,
    sentAt: now,
    expiresAt,
  };
  const t = organizationInvitations;
  const [replaced] = await db
    .update(t)
    .set(fields)
    .where(and(eq(t.workspaceId, wid), eq(t.organizationId, organizationId), eq(t.emailNormalized, normalized), eq(t.state, "pending")))
    .returning({ id: t.id });
  const invitationId = replaced?.id ?? newId();
  if (!replaced) await db.insert(t).values({ id: invitationId, workspaceId: wid, organizationId, emailNormalized: normalized, createdAt: now, state: "pending", ...fields });

  await recordAudit(db, {
    workspaceId: wid,
    type: "organization.invitation_sent",
    actor: actor.userId,
    subject: normalized,
    data: { organization_id: organizationId, invitation_id: invitationId, by: actor.kind, roles: roleIds, administrator: input.administrator, expires_at: expiresAt.toISOString(), replaced: replaced !== undefined },
    at: now,
  });
  const locale = await localeFor(db, wid, normalized, input.locale ?? DEFAULT_LOCALE);
  const emailed = mail(service, { workspaceId: wid, workspaceName: org.workspaceName, organization: org.name, to: normalized, locale, administrator: input.administrator, token, expiresAt });
  return { invitationId, email: fields.email, organizationSlug: org.slug, roleIds, administrator: input.administrator, expiresAt, replaced: replaced !== undefined, emailed };
}

/** Sends a pending invitation again: a new link (the old one dies), valid INVITATION_TTL_MS from now. */
export async function resendInvitation(
  service: Service,
  db: Database,
  input: { workspaceId: string; organizationId: string; invitationId: string; actor: InvitationActor; locale?: Locale },
  allowance: SendAllowance,
): Promise<Sent> {
  const { workspaceId: wid, organizationId, actor } = input;
  const org = await organizationToInviteTo(db, input, allowance);
  const now = service.clock.now();
  const token = randomToken(32);
  const expiresAt = addMs(now, INVITATION_TTL_MS);
  const t = organizationInvitations;
  const [row] = await db
    .update(t)
    .set({ tokenHash: sha256Hex(token), sentAt: now, expiresAt, invitedByKind: actor.kind, invitedBy: actor.userId })
    .where(and(eq(t.workspaceId, wid), eq(t.organizationId, organizationId), eq(t.id, input.invitationId), eq(t.state, "pending")))
    .returning({ email: t.email, emailNormalized: t.emailNormalized, roleIds: t.roleIds, administrator: t.administrator });
  if (!row) throw formError("This invitation is no longer pending");
  await recordAudit(db, {
    workspaceId: wid,
    type: "organization.invitation_resent",
    actor: actor.userId,
    subject: row.emailNormalized,
    data: { organization_id: organizationId, invitation_id: input.invitationId, by: actor.kind, expires_at: expiresAt.toISOString() },
    at: now,
  });
  const locale = await localeFor(db, wid, row.emailNormalized, input.locale ?? DEFAULT_LOCALE);
  const emailed = mail(service, { workspaceId: wid, workspaceName: org.workspaceName, organization: org.name, to: row.emailNormalized, locale, administrator: row.administrator, token, expiresAt });
  return { invitationId: input.invitationId, email: row.email, organizationSlug: org.slug, roleIds: row.roleIds, administrator: row.administrator, expiresAt, replaced: true, emailed };
}

/** Withdraws a pending invitation: its link stops working at once. */
export async function withdrawInvitation(
  service: Service,
  db: Database,
  input: { workspaceId: string; organizationId: string; invitationId: string; actor: InvitationActor },
): Promise<{ email: string; organizationSlug: string }> {
  const { workspaceId: wid, organizationId, actor } = input;
  await authorize(db, wid, organizationId, actor);
  const now = service.clock.now();
  const t = organizationInvitations;
  const [row] = await db
    .update(t)
    .set({ state: "withdrawn", withdrawnAt: now, withdrawnBy: actor.userId })
    .where(and(eq(t.workspaceId, wid), eq(t.organizationId, organizationId), eq(t.id, input.invitationId), eq(t.state, "pending")))
    .returning({ email: t.email, emailNormalized: t.emailNormalized });
  if (!row) throw formError("This invitation is no longer pending");
  await recordAudit(db, {
    workspaceId: wid,
    type: "organization.invitation_withdrawn",
    actor: actor.userId,
    subject: row.emailNormalized,
    data: { organization_id: organizationId, invitation_id: input.invitationId, by: actor.kind },
    at: now,
  });
  const org = await organizationOf(db, wid, organizationId);
  return { email: row.email, organizationSlug: org?.slug ?? organizationId };
}

export interface PendingInvitation {
  id: string;
  email: string;
  roles: { id: string; name: string }[];
  administrator: boolean;
  /** The inviter's email (an operator's or an administrator's of the organization), when the account still exists. */
  invitedBy: string | null;
  invitedByKind: "operator" | "organization_administrator";
  sentAt: Date;
  expiresAt: Date;
  /** Past its expiry: it can no longer be accepted, only sent again or withdrawn. */
  expired: boolean;
}

/** The organization's pending invitations (expired ones included, marked), oldest first. */
export async function listPendingInvitations(
  service: Service,
  db: Database,
  input: { workspaceId: string; organizationId: string; actor: InvitationActor },
): Promise<PendingInvitation[]> {
  const { workspaceId: wid, organizationId, actor } = input;
  await authorize(db, wid, organizationId, actor);
  const t = organizationInvitations;
  const rows = await db
    .select({
      id: t.id,
      email: t.email,
      roleIds: t.roleIds,
      administrator: t.administrator,
      invitedBy: users.email,
      invitedByKind: t.invitedByKind,
      sentAt: t.sentAt,
      expiresAt: t.expiresAt,
    })
    .from(t)
    .leftJoin(users, eq(users.id, t.invitedBy))
    .where(and(eq(t.workspaceId, wid), eq(t.organizationId, organizationId), eq(t.state, "pending")))
    .orderBy(asc(t.createdAt), asc(t.id));
  const roleIds = [...new Set(rows.flatMap((r) => r.roleIds))];
  const names = roleIds.length ? await db.select({ id: roles.id, name: roles.name }).from(roles).where(and(eq(roles.workspaceId, wid), inArray(roles.id, roleIds))) : [];
  const now = service.clock.now();
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    roles: r.roleIds.flatMap((id) => names.filter((n) => n.id === id)),
    administrator: r.administrator,
    // An organization's administrator sees who of them invited, not which operator did.
    invitedBy: actor.kind === "organization_administrator" && r.invitedByKind === "operator" ? null : r.invitedBy,
    invitedByKind: r.invitedByKind,
    sentAt: r.sentAt,
    expiresAt: r.expiresAt,
    expired: r.expiresAt <= now,
  }));
}

/**
 * Makes a member an administrator of the organization, or no longer one (a workspace
 * administrator's change, in the console or the workspace file). Returns false when the user is not
 * a member.
 */
export async function setOrganizationAdministrator(db: Database, input: { workspaceId: string; organizationId: string; userId: string; administrator: boolean }): Promise<boolean> {
  const m = organizationMembers;
  const updated = await db
    .update(m)
    .set({ administrator: input.administrator })
    .where(and(eq(m.workspaceId, input.workspaceId), eq(m.organizationId, input.organizationId), eq(m.userId, input.userId)))
    .returning({ id: m.id });
  return updated.length > 0;
}

/** The organization's administrators (user ids): the console's member list marks them. */
export async function organizationAdministrators(db: Database, workspaceId: string, organizationId: string): Promise<Set<string>> {
  const m = organizationMembers;
  const rows = await db
    .select({ userId: m.userId })
    .from(m)
    .where(and(eq(m.workspaceId, workspaceId), eq(m.organizationId, organizationId), eq(m.administrator, true)));
  return new Set(rows.map((r) => r.userId));
}
