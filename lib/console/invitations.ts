/**
 * Operator invitations: how an operator joins a workspace. No operator ever chooses another
 * operator's credential. An owner invites an email with a role; the invitation is a link with a
 * random secret (only its SHA-256 is stored), valid for 7 days and used once, emailed to the
 * invitee (SMTP, or the system workspace's development outbox) and shown once to the inviter as a
 * fallback. Whoever opens it either creates the operator account with their own name and password
 * (when no operator has that email) or, when one does, must be signed in to the console as that
 * operator to accept. So holding the link is never enough to join as an existing operator, and
 * knowing an operator's password is never enough to accept another workspace's invitation.
 *
 * Inviting answers the same whether an account with the email exists. Accepting is one
 * conditional UPDATE (pending, unexpired, and for an existing account its email) that exactly one
 * caller wins.
 */
import { and, asc, eq, gt, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { operatorInvitations, operatorMemberships, users, workspaces } from "../../db/schema";
import { recordAudit } from "../audit/events";
import { hashPassword, PASSWORD_MAX_LENGTH } from "../authn/password";
import { emailAvailable, sendMail } from "../authn/email/transport";
import type { MailMessage } from "../authn/email/outbox";
import { addMs, DAY } from "../clock";
import { newId, randomToken, sha256Hex } from "../crypto";
import type { Service } from "../service";
import { operatorRoles, requireOperator, type OperatorRole } from "./authz";
import { email, id } from "./forms";
import { defineOperation, fieldError, formError } from "./operation";
import { createOperatorAccount, OPERATOR_PASSWORD_MIN_LENGTH } from "./setup";
import { SYSTEM_WORKSPACE_ID, SYSTEM_WORKSPACE_NAME } from "./system";

/** An invitation link is valid for 7 days. */
export const INVITATION_TTL_MS = 7 * DAY;

export const invitationUrl = (publicUrl: string, token: string) => `${publicUrl}/console/invitation?token=${encodeURIComponent(token)}`;

const role = z.enum(operatorRoles, { error: "Choose owner, admin or viewer" });

/** Invitations that can still be accepted: not accepted, not revoked, not expired. */
const pending = (now: Date) => and(isNull(operatorInvitations.acceptedAt), isNull(operatorInvitations.revokedAt), gt(operatorInvitations.expiresAt, now));

const lockOperators = (db: Database, workspaceId: string) => db.execute(sql`select pg_advisory_xact_lock(hashtext(${`latchkey:operators:${workspaceId}`}))`);

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

function invitationMessage(p: { to: string; workspaceName: string; role: OperatorRole; inviter: string; url: string; expiresAt: Date }): MailMessage {
  const paragraphs = [
    `${p.inviter} invited you to administer the workspace "${p.workspaceName}" in the Latchkey console, as ${p.role}.`,
    `Open this link to accept. If you already have a Latchkey operator account with this email, you sign in with it; otherwise you choose your own password there.`,
    p.url,
    `The link can be used once and expires ${p.expiresAt.toISOString().slice(0, 16).replace("T", " ")} UTC. If you did not expect this invitation, ignore this message.`,
  ];
  return {
    to: p.to,
    subject: `Invitation to administer ${p.workspaceName} in Latchkey`,
    text: paragraphs.join("\n\n") + "\n",
    html:
      `<!doctype html><html lang="en"><body style="font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5;color:#0f172a">` +
      paragraphs.map((line) => (line === p.url ? `<p style="margin:0 0 16px"><a href="${escapeHtml(line)}">${escapeHtml(line)}</a></p>` : `<p style="margin:0 0 16px">${escapeHtml(line)}</p>`)).join("") +
      `</body></html>`,
  };
}

export interface InvitationCreated {
  email: string;
  role: OperatorRole;
  /** The link, returned this once for the inviter to pass on should the email not arrive. */
  url: string;
  expiresAt: Date;
  /** Whether the link was handed to the mail transport (false when this server cannot send email). */
  emailed: boolean;
}

/**
 * Invites `email` to this workspace with `role`. The same answer whether or not an operator
 * account has this email; a pending invitation of the same email here is replaced (revoked).
 */
export const inviteOperator = defineOperation({
  name: "operator.invited",
  role: "owner",
  input: z.object({ email: email(), role }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const normalized = input.email.toLowerCase();
    await lockOperators(ctx.db, wid);
    // Members of this workspace are listed on the same page, so this tells the owner nothing new.
    const [member] = await ctx.db
      .select({ id: operatorMemberships.id })
      .from(operatorMemberships)
      .innerJoin(users, eq(users.id, operatorMemberships.operatorUserId))
      .where(and(eq(operatorMemberships.workspaceId, wid), eq(users.workspaceId, SYSTEM_WORKSPACE_ID), eq(users.emailNormalized, normalized)))
      .limit(1);
    if (member) throw fieldError("email", "This operator is already a member of this workspace");
    const replaced = await ctx.db
      .update(operatorInvitations)
      .set({ revokedAt: ctx.now })
      .where(and(eq(operatorInvitations.workspaceId, wid), eq(operatorInvitations.emailNormalized, normalized), pending(ctx.now)))
      .returning({ id: operatorInvitations.id });
    const token = randomToken(32);
    const invitationId = newId();
    const expiresAt = addMs(ctx.now, INVITATION_TTL_MS);
    await ctx.db.insert(operatorInvitations).values({
      id: invitationId,
      workspaceId: wid,
      email: input.email,
      emailNormalized: normalized,
      role: input.role,
      tokenHash: sha256Hex(token),
      invitedBy: ctx.access.operator.userId,
      createdAt: ctx.now,
      expiresAt,
    });
    const url = invitationUrl(ctx.service.config.publicUrl, token);
    const emailed = emailAvailable(ctx.service.config);
    // Mail to operators goes through the system workspace (its outbox is no tenant's to read).
    if (emailed) {
      sendMail(
        { service: ctx.service, workspace: { id: SYSTEM_WORKSPACE_ID, name: SYSTEM_WORKSPACE_NAME } },
        invitationMessage({ to: input.email, workspaceName: ctx.access.workspace.name, role: input.role, inviter: ctx.access.operator.email, url, expiresAt }),
      );
    }
    const result: InvitationCreated = { email: input.email, role: input.role, url, expiresAt, emailed };
    return {
      result,
      audit: { target: input.email, data: { invitation_id: invitationId, role: input.role, expires_at: expiresAt.toISOString(), replaced: replaced.map((r) => r.id) } },
    };
  },
});

/** Withdraws a pending invitation: its link stops working at once. */
export const revokeInvitation = defineOperation({
  name: "operator.invitation_revoked",
  role: "owner",
  input: z.object({ invitation_id: id("invitation") }),
  async run(ctx, input) {
    const [row] = await ctx.db
      .update(operatorInvitations)
      .set({ revokedAt: ctx.now })
      .where(and(eq(operatorInvitations.id, input.invitation_id), eq(operatorInvitations.workspaceId, ctx.access.workspace.id), pending(ctx.now)))
      .returning({ email: operatorInvitations.email, role: operatorInvitations.role });
    if (!row) throw formError("This invitation is no longer pending");
    return { result: null, audit: { target: row.email, data: { invitation_id: input.invitation_id, role: row.role } } };
  },
});

export interface PendingInvitation {
  id: string;
  email: string;
  role: OperatorRole;
  createdAt: Date;
  expiresAt: Date;
}

/** This workspace's invitations that can still be accepted, oldest first. */
export async function listPendingInvitations(service: Service, workspaceId: string): Promise<PendingInvitation[]> {
  return service.db
    .select({ id: operatorInvitations.id, email: operatorInvitations.email, role: operatorInvitations.role, createdAt: operatorInvitations.createdAt, expiresAt: operatorInvitations.expiresAt })
    .from(operatorInvitations)
    .where(and(eq(operatorInvitations.workspaceId, workspaceId), pending(service.clock.now())))
    .orderBy(asc(operatorInvitations.createdAt));
}

export type InvitationProblem = "invalid" | "expired" | "used" | "revoked" | "account_exists" | "no_account" | "wrong_operator";

const PROBLEMS: Record<InvitationProblem, string> = {
  invalid: "This invitation link is not valid. Ask the workspace's owner for a new invitation.",
  expired: "This invitation has expired. Ask the workspace's owner for a new one.",
  used: "This invitation has already been accepted.",
  revoked: "This invitation was withdrawn. Ask the workspace's owner for a new one.",
  account_exists: "An operator account with this email already exists: sign in to the console with it to accept.",
  no_account: "No operator account has this email yet: create it on this page to accept.",
  wrong_operator: "This invitation is for another email address. Sign out, then sign in as the invited operator to accept it.",
};

export class InvitationError extends Error {
  constructor(readonly code: InvitationProblem) {
    super(PROBLEMS[code]);
    this.name = "InvitationError";
  }
}

export interface InvitationView {
  workspaceId: string;
  workspaceName: string;
  email: string;
  role: OperatorRole;
  expiresAt: Date;
  /** Whether an operator account has the invited email (then the invitee signs in to accept). */
  accountExists: boolean;
}

interface Row {
  id: string;
  workspaceId: string;
  email: string;
  emailNormalized: string;
  role: OperatorRole;
  expiresAt: Date;
  acceptedAt: Date | null;
  revokedAt: Date | null;
}

/** The columns an invitation is read with (Row). */
const ROW = {
  id: operatorInvitations.id,
  workspaceId: operatorInvitations.workspaceId,
  email: operatorInvitations.email,
  emailNormalized: operatorInvitations.emailNormalized,
  role: operatorInvitations.role,
  expiresAt: operatorInvitations.expiresAt,
  acceptedAt: operatorInvitations.acceptedAt,
  revokedAt: operatorInvitations.revokedAt,
};

async function findByToken(db: Database, token: string): Promise<Row | null> {
  if (!token || token.length > 200) return null;
  const [row] = await db
    .select(ROW)
    .from(operatorInvitations)
    .where(eq(operatorInvitations.tokenHash, sha256Hex(token)))
    .limit(1);
  return row ?? null;
}

/** Why a row found by its token cannot be accepted now, or null when it can. */
function problemOf(row: Row | null, now: Date): InvitationProblem | null {
  if (!row) return "invalid";
  if (row.acceptedAt) return "used";
  if (row.revokedAt) return "revoked";
  if (row.expiresAt <= now) return "expired";
  return null;
}

async function operatorByEmail(db: Database, normalized: string) {
  const [row] = await db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.workspaceId, SYSTEM_WORKSPACE_ID), eq(users.emailNormalized, normalized)))
    .limit(1);
  return row ?? null;
}

/**
 * What the invitation page shows for this link: the workspace, role and invited email, and
 * whether to create an account or sign in. Nothing about the account's other workspaces.
 */
export async function viewInvitation(service: Service, token: string): Promise<InvitationView | InvitationError> {
  const row = await findByToken(service.db, token);
  const problem = problemOf(row, service.clock.now());
  if (problem || !row) return new InvitationError(problem ?? "invalid");
  const [[workspace], account] = await Promise.all([
    service.db.select({ name: workspaces.name }).from(workspaces).where(eq(workspaces.id, row.workspaceId)).limit(1),
    operatorByEmail(service.db, row.emailNormalized),
  ]);
  if (!workspace) return new InvitationError("invalid");
  return { workspaceId: row.workspaceId, workspaceName: workspace.name, email: row.email, role: row.role, expiresAt: row.expiresAt, accountExists: !!account };
}

/**
 * Consumes the invitation: one conditional UPDATE, so of concurrent accepts exactly one wins.
 * `emailNormalized`, when given, must be the invitation's (the signed-in operator's email).
 */
async function consume(db: Database, token: string, now: Date, acceptedBy: string | null, emailNormalized?: string): Promise<Row> {
  const [row] = await db
    .update(operatorInvitations)
    .set({ acceptedAt: now, acceptedBy })
    .where(
      and(
        eq(operatorInvitations.tokenHash, sha256Hex(token)),
        pending(now),
        emailNormalized === undefined ? undefined : eq(operatorInvitations.emailNormalized, emailNormalized),
      ),
    )
    .returning(ROW);
  if (row) return row;
  const found = await findByToken(db, token);
  throw new InvitationError(problemOf(found, now) ?? "wrong_operator");
}

async function join(db: Database, invitation: Row, operatorUserId: string, now: Date, account: "created" | "existing", ip: string | null): Promise<void> {
  await lockOperators(db, invitation.workspaceId);
  // Already a member (added since the invitation): the membership and its role stay as they are.
  await db
    .insert(operatorMemberships)
    .values({ id: newId(), operatorUserId, workspaceId: invitation.workspaceId, role: invitation.role, createdAt: now })
    .onConflictDoNothing();
  await recordAudit(db, {
    workspaceId: invitation.workspaceId,
    type: "console.operator.invitation_accepted",
    actor: operatorUserId,
    subject: invitation.email,
    data: { operator: invitation.email, invitation_id: invitation.id, role: invitation.role, account },
    ip,
    at: now,
  });
}

export const acceptInvitationInput = z.object({
  name: z.string({ error: "Enter a name" }).trim().min(1, "Enter a name").max(200, "Use at most 200 characters"),
  password: z
    .string({ error: "Choose a password" })
    .min(OPERATOR_PASSWORD_MIN_LENGTH, `Use at least ${OPERATOR_PASSWORD_MIN_LENGTH} characters`)
    .max(PASSWORD_MAX_LENGTH, `Use at most ${PASSWORD_MAX_LENGTH} characters`),
});
export type AcceptInvitationInput = z.infer<typeof acceptInvitationInput>;

/**
 * Accepts an invitation by creating the operator account it names, with the invitee's own name
 * and password. Refused when an operator with this email exists: then only that operator,
 * signed in, can accept (acceptInvitationAsOperator).
 */
export async function acceptInvitationWithNewAccount(
  service: Service,
  token: string,
  input: AcceptInvitationInput,
  meta: { ip?: string | null } = {},
): Promise<{ userId: string; workspaceId: string }> {
  const parsed = acceptInvitationInput.parse(input);
  const passwordHash = await hashPassword(parsed.password);
  return service.db.transaction(async (tx) => {
    const now = service.clock.now();
    const invitation = await consume(tx, token, now, null);
    // Two invitations of one email (to two workspaces) accepted at once create one account.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`latchkey:operator-email:${invitation.emailNormalized}`}))`);
    if (await operatorByEmail(tx, invitation.emailNormalized)) throw new InvitationError("account_exists");
    const userId = await createOperatorAccount(tx, { email: invitation.email, name: parsed.name, passwordHash, now });
    await tx.update(operatorInvitations).set({ acceptedBy: userId }).where(eq(operatorInvitations.id, invitation.id));
    await join(tx, invitation, userId, now, "created", meta.ip ?? null);
    return { userId, workspaceId: invitation.workspaceId };
  });
}

/**
 * Accepts an invitation as the operator signed in to the console (session `consoleToken`), whose
 * email must be the invited one. Throws ConsoleAccessError("unauthenticated") without a live
 * console session.
 */
export async function acceptInvitationAsOperator(
  service: Service,
  token: string,
  consoleToken: string | null | undefined,
  meta: { ip?: string | null } = {},
): Promise<{ workspaceId: string }> {
  const operator = await requireOperator(service, consoleToken);
  return service.db.transaction(async (tx) => {
    const now = service.clock.now();
    const invitation = await consume(tx, token, now, operator.userId, operator.email.toLowerCase());
    await join(tx, invitation, operator.userId, now, "existing", meta.ip ?? null);
    return { workspaceId: invitation.workspaceId };
  });
}
