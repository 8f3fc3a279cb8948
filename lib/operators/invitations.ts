/**
 * Operator invitations: how an operator joins a workspace. An operator account, and every
 * credential on it, belongs only to whoever proved the mailbox (lib/operators/accounts.ts).
 *
 * An owner invites an email with a role; the invitation is a link with a random secret (only its
 * SHA-256 is stored), valid for 7 days and used once, emailed to the invitee through the system
 * workspace and shown once to the inviter as a fallback. The link only identifies the invitation:
 * whoever opens it sees the workspace and role, and may have a one-time code sent to the invited
 * address (the email-code factor's challenge, its send and guessing limits). Entering that code
 * proves the mailbox and hands this browser a proof (its SHA-256 kept on the invitation, valid
 * 30 minutes). Only then does the page say whether an operator account has the address: it offers
 * to create one (own name, own password or none) or to accept with the existing one. Accepting
 * with an account whose password was set before any proof discards that password and ends every
 * other session of the account. An operator already signed in to the console as the invited
 * address accepts without a code.
 *
 * Inviting, the page and the code answer the same whether an account exists. Accepting is one
 * conditional UPDATE (pending, unexpired, and this browser's proof or the signed-in operator's
 * email) that exactly one caller wins.
 */
import { and, asc, eq, gt, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { operatorInvitations, operatorMemberships, users, workspaces } from "../../db/schema";
import { recordAudit } from "../audit/events";
import { screenOperatorPassword } from "../authn/passwords/policy";
import { hashPassword, PASSWORD_MAX_LENGTH } from "../authn/password";
import { normalizeEmail } from "../authn/email-address";
import { emailAvailable } from "../authn/email/transport";
import { EMAIL_CODE_TTL_MS, issueEmailCode, sendGate, verifyEmailCode } from "../authn/factors/email-code";
import { addMs, DAY, MINUTE, utcMinute as utc } from "../clock";
import { newId, randomToken, sha256Hex } from "../crypto";
import { email, id } from "../forms/fields";
import type { Service } from "../service";
import { defineOperation, fieldError, formError, type Operator, type OperatorRole } from "../surfaces/operation";
import { createOperatorAccount, mailboxProven, mailOperator, OPERATOR_PASSWORD_MIN_LENGTH, plainMessage } from "./accounts";
import { lockOperators, role } from "./memberships";
import { SYSTEM_WORKSPACE_ID, systemContext } from "./system";

/** An invitation link is valid for 7 days. */
export const INVITATION_TTL_MS = 7 * DAY;
/** How long the proof of the mailbox (the code entered) lets this browser create the account or accept. */
export const INVITATION_PROOF_TTL_MS = 30 * MINUTE;

export const invitationUrl = (publicUrl: string, token: string) => `${publicUrl}/console/invitation?token=${encodeURIComponent(token)}`;

/** Invitations that can still be accepted: not accepted, not revoked, not expired. */
const pending = (now: Date) => and(isNull(operatorInvitations.acceptedAt), isNull(operatorInvitations.revokedAt), gt(operatorInvitations.expiresAt, now));

/** The key of an address the console form or `operator grant` has already parsed (lib/authn/email-address.ts). */
function normalizedAddress(address: string): string {
  const normalized = normalizeEmail(address);
  if (!normalized) throw new TypeError("an invitation needs a parsed email address");
  return normalized;
}


function invitationMessage(p: { to: string; workspaceName: string; role: OperatorRole; inviter: string; url: string; expiresAt: Date }) {
  return plainMessage(p.to, `Invitation to administer ${p.workspaceName} in Latchkey`, [
    `${p.inviter} invited you to administer the workspace "${p.workspaceName}" in the Latchkey console, as ${p.role}.`,
    `Open this link to accept. The page sends a one-time code to this address; with it you accept, and choose your own password if you have no operator account yet.`,
    p.url,
    `The link can be used once and expires ${utc(p.expiresAt)}. If you did not expect this invitation, ignore this message.`,
  ]);
}

export interface NewInvitation {
  invitationId: string;
  /** The link, for the invitee; whoever holds it still needs the code sent to the address. */
  url: string;
  expiresAt: Date;
  /** Pending invitations of this email to this workspace that this one replaced (revoked). */
  replaced: string[];
}

/**
 * Records an invitation of `email` to a workspace with `role`, replacing a pending one of the same
 * email there. Used by the console's owners and by the command line (`operator grant` to an
 * address no proven account has).
 */
export async function createInvitation(
  db: Database,
  input: { workspaceId: string; email: string; role: OperatorRole; invitedBy: string | null; now: Date; publicUrl: string },
): Promise<NewInvitation> {
  const normalized = normalizedAddress(input.email);
  await lockOperators(db, input.workspaceId);
  const replaced = await db
    .update(operatorInvitations)
    .set({ revokedAt: input.now })
    .where(and(eq(operatorInvitations.workspaceId, input.workspaceId), eq(operatorInvitations.emailNormalized, normalized), pending(input.now)))
    .returning({ id: operatorInvitations.id });
  const token = randomToken(32);
  const invitationId = newId();
  const expiresAt = addMs(input.now, INVITATION_TTL_MS);
  await db.insert(operatorInvitations).values({
    id: invitationId,
    workspaceId: input.workspaceId,
    email: input.email.trim(),
    emailNormalized: normalized,
    role: input.role,
    tokenHash: sha256Hex(token),
    invitedBy: input.invitedBy,
    createdAt: input.now,
    expiresAt,
  });
  return { invitationId, url: invitationUrl(input.publicUrl, token), expiresAt, replaced: replaced.map((r) => r.id) };
}

/** Emails an invitation to the invited address through the system workspace; false when this server cannot send email. */
export function mailInvitation(service: Service, p: { to: string; workspaceName: string; role: OperatorRole; inviter: string; url: string; expiresAt: Date }): boolean {
  return mailOperator(service, invitationMessage(p));
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
    const normalized = normalizedAddress(input.email);
    await lockOperators(ctx.db, wid);
    // Members of this workspace are listed on the same page, so this tells the owner nothing new.
    const [member] = await ctx.db
      .select({ id: operatorMemberships.id })
      .from(operatorMemberships)
      .innerJoin(users, eq(users.id, operatorMemberships.operatorUserId))
      .where(and(eq(operatorMemberships.workspaceId, wid), eq(users.workspaceId, SYSTEM_WORKSPACE_ID), eq(users.emailNormalized, normalized)))
      .limit(1);
    if (member) throw fieldError("email", "This operator is already a member of this workspace");
    const created = await createInvitation(ctx.db, {
      workspaceId: wid,
      email: input.email,
      role: input.role,
      invitedBy: ctx.access.operator.userId,
      now: ctx.now,
      publicUrl: ctx.service.config.publicUrl,
    });
    const emailed = mailInvitation(ctx.service, {
      to: input.email,
      workspaceName: ctx.access.workspace.name,
      role: input.role,
      inviter: ctx.access.operator.email,
      url: created.url,
      expiresAt: created.expiresAt,
    });
    const result: InvitationCreated = { email: input.email, role: input.role, url: created.url, expiresAt: created.expiresAt, emailed };
    return {
      result,
      audit: {
        target: input.email,
        data: { invitation_id: created.invitationId, role: input.role, expires_at: created.expiresAt.toISOString(), replaced: created.replaced },
      },
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

export type InvitationProblem =
  | "invalid"
  | "expired"
  | "used"
  | "revoked"
  | "unproven"
  | "account_exists"
  | "no_account"
  | "disabled"
  | "wrong_operator"
  | "code_invalid"
  | "code_expired"
  | "code_wait"
  | "code_limited"
  | "email_unavailable";

const PROBLEMS: Record<InvitationProblem, string> = {
  invalid: "This invitation link is not valid. Ask the workspace's owner for a new invitation.",
  expired: "This invitation has expired. Ask the workspace's owner for a new one.",
  used: "This invitation has already been accepted.",
  revoked: "This invitation was withdrawn. Ask the workspace's owner for a new one.",
  unproven: "Enter the code sent to the invited address first (it expires after 30 minutes: ask for a new one).",
  account_exists: "An operator account with this email already exists: accept with it instead.",
  no_account: "No operator account has this email yet: create it on this page to accept.",
  disabled: "This operator account is disabled. Ask an installation operator to enable it.",
  wrong_operator: "This invitation is for another email address. Sign out, then sign in as the invited operator to accept it.",
  code_invalid: "That code is not right. Check the latest message and try again.",
  code_expired: "That code has expired or was tried too often. Ask for a new one.",
  code_wait: "A code was just sent to this address. Wait half a minute before asking for another.",
  code_limited: "Too many codes were asked for. Try again later.",
  email_unavailable: "This server cannot send email, so the invitation cannot be accepted here. Ask an installation operator.",
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
  /**
   * Whether this browser proved the mailbox (entered the code sent to it); only then `account`
   * says whether an operator account has the address (create one, or accept with it).
   */
  proof: { account: "new" | "existing" } | null;
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
  proofHash: string | null;
  provenAt: Date | null;
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
  proofHash: operatorInvitations.proofHash,
  provenAt: operatorInvitations.provenAt,
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

/** Whether `proof` is this invitation's live proof of the mailbox. */
function holdsProof(row: Row, proof: string | null | undefined, now: Date): boolean {
  return !!proof && proof.length <= 200 && row.proofHash === sha256Hex(proof) && !!row.provenAt && row.provenAt.getTime() + INVITATION_PROOF_TTL_MS > now.getTime();
}

async function operatorByEmail(db: Database, normalized: string) {
  const [row] = await db
    .select({ id: users.id, status: users.status })
    .from(users)
    .where(and(eq(users.workspaceId, SYSTEM_WORKSPACE_ID), eq(users.emailNormalized, normalized)))
    .limit(1);
  return row ?? null;
}

/**
 * What the invitation page shows for this link: the workspace, role and invited email; and, only
 * to the browser holding the proof of the mailbox, whether an operator account has the address.
 * Nothing about the account's other workspaces.
 */
export async function viewInvitation(service: Service, token: string, proof?: string | null): Promise<InvitationView | InvitationError> {
  const row = await findByToken(service.db, token);
  const now = service.clock.now();
  const problem = problemOf(row, now);
  if (problem || !row) return new InvitationError(problem ?? "invalid");
  const [workspace] = await service.db.select({ name: workspaces.name }).from(workspaces).where(eq(workspaces.id, row.workspaceId)).limit(1);
  if (!workspace) return new InvitationError("invalid");
  const proven = holdsProof(row, proof, now) ? { account: (await operatorByEmail(service.db, row.emailNormalized)) ? ("existing" as const) : ("new" as const) } : null;
  return { workspaceId: row.workspaceId, workspaceName: workspace.name, email: row.email, role: row.role, expiresAt: row.expiresAt, proof: proven };
}

/** The email-code challenge proving an invitation's mailbox: a purpose of its own, bound to the invitation. */
const codeBinding = (row: Row) => ({ purpose: "invitation", bindingId: row.id });

async function pendingRow(service: Service, token: string): Promise<Row> {
  const row = await findByToken(service.db, token);
  const problem = problemOf(row, service.clock.now());
  if (problem || !row) throw new InvitationError(problem ?? "invalid");
  return row;
}

/**
 * Sends a one-time code to the invited address (never to anyone else), under the email-code
 * factor's send limits and cooldown. The same for an address with or without an account.
 */
export async function sendInvitationCode(service: Service, request: Request, token: string): Promise<void> {
  const row = await pendingRow(service, token);
  if (!emailAvailable(service.config)) throw new InvitationError("email_unavailable");
  const ctx = systemContext(service);
  const gate = await sendGate(ctx, request, row.emailNormalized);
  if (!gate.allowed) throw new InvitationError(gate.reason === "cooldown" ? "code_wait" : "code_limited");
  const code = await issueEmailCode(ctx, codeBinding(row), { address: row.emailNormalized, userId: null, deliverable: true });
  await gate.recordSend();
  const [workspace] = await service.db.select({ name: workspaces.name }).from(workspaces).where(eq(workspaces.id, row.workspaceId)).limit(1);
  mailOperator(
    service,
    plainMessage(row.email, `Your code to accept the invitation to ${workspace?.name ?? row.workspaceId}`, [
      `Your code is ${code}. Enter it on the invitation page to accept the invitation to administer "${workspace?.name ?? row.workspaceId}" in the Latchkey console, as ${row.role}.`,
      `It is valid for ${EMAIL_CODE_TTL_MS / MINUTE} minutes. If you did not ask for it, ignore this message: without the code nobody can accept the invitation as you.`,
    ]),
  );
}

/**
 * Checks a code sent to the invited address (one attempt, the email-code factor's guessing
 * limits; a right code is consumed by one conditional UPDATE, so of parallel uses one wins). A
 * right code proves the mailbox: returns the proof this browser keeps (its SHA-256 is stored on
 * the invitation, replacing any earlier one).
 */
export async function proveInvitationMailbox(service: Service, request: Request, token: string, code: string | null): Promise<string> {
  const row = await pendingRow(service, token);
  const result = await verifyEmailCode(systemContext(service), request, codeBinding(row), code);
  if (!result.ok) throw new InvitationError(result.reason === "expired" ? "code_expired" : "code_invalid");
  if (result.address !== row.emailNormalized) throw new InvitationError("code_invalid");
  const proof = randomToken(32);
  const now = service.clock.now();
  const [proven] = await service.db
    .update(operatorInvitations)
    .set({ proofHash: sha256Hex(proof), provenAt: now })
    .where(and(eq(operatorInvitations.id, row.id), pending(now)))
    .returning({ id: operatorInvitations.id });
  if (!proven) throw new InvitationError(problemOf(await findByToken(service.db, token), now) ?? "invalid");
  return proof;
}

/**
 * Consumes the invitation: one conditional UPDATE, so of concurrent accepts exactly one wins. It
 * needs this browser's live proof of the mailbox, or (`emailNormalized`) the signed-in operator's
 * email to be the invitation's.
 */
async function consume(db: Database, token: string, now: Date, acceptedBy: string | null, by: { proof: string } | { emailNormalized: string }): Promise<Row> {
  const [row] = await db
    .update(operatorInvitations)
    .set({ acceptedAt: now, acceptedBy })
    .where(
      and(
        eq(operatorInvitations.tokenHash, sha256Hex(token)),
        pending(now),
        "proof" in by
          ? and(eq(operatorInvitations.proofHash, sha256Hex(by.proof)), gt(operatorInvitations.provenAt, addMs(now, -INVITATION_PROOF_TTL_MS)))
          : eq(operatorInvitations.emailNormalized, by.emailNormalized),
      ),
    )
    .returning(ROW);
  if (row) return row;
  const found = await findByToken(db, token);
  throw new InvitationError(problemOf(found, now) ?? ("proof" in by ? "unproven" : "wrong_operator"));
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

const lockEmail = (db: Database, normalized: string) => db.execute(sql`select pg_advisory_xact_lock(hashtext(${`latchkey:operator-email:${normalized}`}))`);

export const acceptInvitationInput = z.object({
  name: z.string({ error: "Enter a name" }).trim().min(1, "Enter a name").max(200, "Use at most 200 characters"),
  /** Empty: no password; the operator signs in with email codes. */
  password: z.union([
    z.literal(""),
    z
      .string()
      .min(OPERATOR_PASSWORD_MIN_LENGTH, `Use at least ${OPERATOR_PASSWORD_MIN_LENGTH} characters`)
      .max(PASSWORD_MAX_LENGTH, `Use at most ${PASSWORD_MAX_LENGTH} characters`),
  ]),
});
export type AcceptInvitationInput = z.infer<typeof acceptInvitationInput>;

export interface Accepted {
  userId: string;
  workspaceId: string;
  /** A password set before the mailbox was proven was discarded (the person is asked to set their own). */
  passwordDiscarded: boolean;
  /** Whether the account has a password now. */
  hasPassword: boolean;
}

/**
 * Accepts an invitation by creating the operator account it names, with the invitee's own name
 * and password (or none): only with this browser's proof of the mailbox. Refused when an operator
 * with this email exists (acceptInvitationWithProof then).
 */
export async function acceptInvitationWithNewAccount(
  service: Service,
  token: string,
  proof: string | null | undefined,
  input: AcceptInvitationInput,
  meta: { ip?: string | null } = {},
): Promise<Accepted> {
  const parsed = acceptInvitationInput.parse(input);
  if (!proof) {
    await pendingRow(service, token);
    throw new InvitationError("unproven");
  }
  // The operators' screening (lib/authn/passwords): a refused password is said beside its field (PasswordRefused).
  if (parsed.password) await screenOperatorPassword(service, parsed.password);
  const passwordHash = parsed.password ? await hashPassword(parsed.password) : null;
  return service.db.transaction(async (tx) => {
    const now = service.clock.now();
    const invitation = await consume(tx, token, now, null, { proof });
    // Two invitations of one email (to two workspaces) accepted at once create one account.
    await lockEmail(tx, invitation.emailNormalized);
    if (await operatorByEmail(tx, invitation.emailNormalized)) throw new InvitationError("account_exists");
    const userId = await createOperatorAccount(tx, { email: invitation.email, name: parsed.name, passwordHash, now });
    await tx.update(operatorInvitations).set({ acceptedBy: userId }).where(eq(operatorInvitations.id, invitation.id));
    await join(tx, invitation, userId, now, "created", meta.ip ?? null);
    return { userId, workspaceId: invitation.workspaceId, passwordDiscarded: false, hasPassword: passwordHash !== null };
  });
}

/**
 * Accepts an invitation with the existing operator account of the invited address: only with this
 * browser's proof of the mailbox. A password set on the account before any proof is discarded, and
 * every session of the account ends (this browser then gets a new one).
 */
export async function acceptInvitationWithProof(service: Service, token: string, proof: string | null | undefined, meta: { ip?: string | null } = {}): Promise<Accepted> {
  if (!proof) {
    await pendingRow(service, token);
    throw new InvitationError("unproven");
  }
  return service.db.transaction(async (tx) => {
    const now = service.clock.now();
    const invitation = await consume(tx, token, now, null, { proof });
    await lockEmail(tx, invitation.emailNormalized);
    const account = await operatorByEmail(tx, invitation.emailNormalized);
    if (!account) throw new InvitationError("no_account");
    if (account.status !== "active") throw new InvitationError("disabled");
    await tx.update(operatorInvitations).set({ acceptedBy: account.id }).where(eq(operatorInvitations.id, invitation.id));
    await join(tx, invitation, account.id, now, "existing", meta.ip ?? null);
    const passwordDiscarded = await mailboxProven(tx, account.id, now);
    const [row] = await tx.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, account.id)).limit(1);
    return { userId: account.id, workspaceId: invitation.workspaceId, passwordDiscarded, hasPassword: !!row?.passwordHash };
  });
}

/**
 * Accepts an invitation as the operator signed in to the console (resolved by the console from
 * its session), whose email must be the invited one.
 */
export async function acceptInvitationAsOperator(
  service: Service,
  token: string,
  operator: Pick<Operator, "userId" | "email">,
  meta: { ip?: string | null } = {},
): Promise<{ workspaceId: string }> {
  // An operator's email is their account's, parsed when it was made; no address keys nothing.
  const emailNormalized = normalizeEmail(operator.email) ?? "";
  return service.db.transaction(async (tx) => {
    const now = service.clock.now();
    const invitation = await consume(tx, token, now, operator.userId, { emailNormalized });
    await join(tx, invitation, operator.userId, now, "existing", meta.ip ?? null);
    return { workspaceId: invitation.workspaceId };
  });
}
