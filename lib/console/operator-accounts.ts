/**
 * An operator account's own credentials: they belong only to whoever proved the mailbox.
 *
 * - An account is made only after its mailbox is proven (setup's link, printed to the installation;
 *   an invitation's code, sent to the invited address: lib/console/invitations.ts).
 * - A password set before the proof (`users.password_unproven`: accounts made by the invitation flow
 *   of earlier releases, whose password whoever held the link chose) is refused on its own at the
 *   console's sign-in (`checkConsoleSignIn`), and discarded when the mailbox is proven: by signing
 *   in with an email code, or by an invitation's code (`mailboxProven`). Every other session of the
 *   account ends then, and the person is asked to set their own password or go on without one.
 * - The operator changes (or sets, or removes nothing else of) their password here, sees their
 *   console sessions and ends them; a password set or changed is announced by email to the account's
 *   address, through the system workspace's mail.
 */
import { and, desc, eq, gt, isNull, ne } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { consoleSessions, grants, hostedSessions, users } from "../../db/schema";
import { recordAudit } from "../audit/events";
import type { MailMessage } from "../authn/email/outbox";
import { emailAvailable, sendMail } from "../authn/email/transport";
import { hashPassword, PASSWORD_MAX_LENGTH, verifyPassword } from "../authn/password";
import type { Service } from "../service";
import { requireOperator, type Operator } from "./authz";
import { OPERATOR_PASSWORD_MIN_LENGTH } from "./setup";
import { SYSTEM_WORKSPACE_ID, SYSTEM_WORKSPACE_NAME } from "./system";
import { EMAIL_CODE_EVIDENCE } from "../authn/factors/email-code/evidence";

/** What of an account's sessions a change keeps: the browser that made it. */
export interface KeptSession {
  consoleSessionId?: string | null;
  hostedSessionId?: string | null;
  grantId?: string | null;
}

/**
 * Ends every session of the operator account but `keep`'s: console sessions, and the system
 * workspace's hosted sessions and grants (whose tokens die with them).
 */
export async function endOperatorSessions(db: Database, userId: string, now: Date, reason: string, keep: KeptSession = {}): Promise<void> {
  await db
    .update(consoleSessions)
    .set({ endedAt: now, endReason: reason })
    .where(and(eq(consoleSessions.operatorUserId, userId), isNull(consoleSessions.endedAt), keep.consoleSessionId ? ne(consoleSessions.id, keep.consoleSessionId) : undefined));
  await db
    .update(hostedSessions)
    .set({ endedAt: now, endReason: reason })
    .where(
      and(
        eq(hostedSessions.workspaceId, SYSTEM_WORKSPACE_ID),
        eq(hostedSessions.userId, userId),
        isNull(hostedSessions.endedAt),
        keep.hostedSessionId ? ne(hostedSessions.id, keep.hostedSessionId) : undefined,
      ),
    );
  await db
    .update(grants)
    .set({ revokedAt: now, revokeReason: reason })
    .where(and(eq(grants.workspaceId, SYSTEM_WORKSPACE_ID), eq(grants.userId, userId), isNull(grants.revokedAt), keep.grantId ? ne(grants.id, keep.grantId) : undefined));
}

/**
 * The mailbox of operator `userId` was just proven. A password set before any proof is discarded
 * (one conditional UPDATE: of parallel proofs one discards it) and every session but `keep` ends.
 * Returns whether a password was discarded; the caller then asks the person to set their own.
 */
export async function mailboxProven(db: Database, userId: string, now: Date, keep: KeptSession = {}): Promise<boolean> {
  const [discarded] = await db
    .update(users)
    .set({ passwordHash: null, passwordUnproven: false, emailVerified: true, updatedAt: now })
    .where(and(eq(users.workspaceId, SYSTEM_WORKSPACE_ID), eq(users.id, userId), eq(users.passwordUnproven, true)))
    .returning({ id: users.id, email: users.email });
  if (!discarded) return false;
  await endOperatorSessions(db, userId, now, "mailbox_proven", keep);
  await recordAudit(db, { workspaceId: SYSTEM_WORKSPACE_ID, type: "console.password_discarded", actor: userId, subject: discarded.email, data: {}, at: now });
  return true;
}

/** Where a person goes once their mailbox proof discarded a password they did not set: set their own, or go on without. */
export const ACCOUNT_PAGE_AFTER_PROOF = "/console/account?proven=1";

/** Why the console refuses a sign-in that the hosted sign-in let through. */
export const UNPROVEN_PASSWORD_MESSAGE =
  "The password of this operator account was set before anyone proved its email address, so it no longer signs in. Sign in with an email code instead; you then choose your own password.";

/**
 * The console's rule on a completed sign-in of the system workspace (its hosted session's
 * evidence): a password set before the mailbox was proven signs nobody in, and an email code
 * proves the mailbox (the password is discarded, every other session ends). Returns whether a
 * password was discarded, or "refused".
 */
export async function checkConsoleSignIn(
  db: Database,
  signIn: { userId: string; hostedSessionId: string; grantId: string },
  now: Date,
): Promise<"refused" | { passwordDiscarded: boolean }> {
  const [row] = await db
    .select({ unproven: users.passwordUnproven, evidence: hostedSessions.evidence })
    .from(users)
    .innerJoin(hostedSessions, and(eq(hostedSessions.userId, users.id), eq(hostedSessions.id, signIn.hostedSessionId)))
    .where(and(eq(users.workspaceId, SYSTEM_WORKSPACE_ID), eq(users.id, signIn.userId)))
    .limit(1);
  if (!row) return "refused";
  if (!row.unproven) return { passwordDiscarded: false };
  if (row.evidence.some((e) => e.method === EMAIL_CODE_EVIDENCE.method)) {
    return { passwordDiscarded: await mailboxProven(db, signIn.userId, now, { hostedSessionId: signIn.hostedSessionId, grantId: signIn.grantId }) };
  }
  // Not this session either: the password that made it is not the account owner's to use.
  await endOperatorSessions(db, signIn.userId, now, "mailbox_unproven");
  return "refused";
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** A plain message (paragraphs), as text and HTML. */
export function plainMessage(to: string, subject: string, paragraphs: string[]): MailMessage {
  return {
    to,
    subject,
    text: paragraphs.join("\n\n") + "\n",
    html:
      `<!doctype html><html lang="en"><body style="font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5;color:#0f172a">` +
      paragraphs.map((line) => `<p style="margin:0 0 16px">${escapeHtml(line)}</p>`).join("") +
      `</body></html>`,
  };
}

/** Mail to an operator goes through the system workspace (its outbox is no tenant's to read). */
export function mailOperator(service: Service, message: MailMessage): boolean {
  if (!emailAvailable(service.config)) return false;
  sendMail({ service, workspace: { id: SYSTEM_WORKSPACE_ID, name: SYSTEM_WORKSPACE_NAME } }, message);
  return true;
}

export const passwordInput = z
  .object({
    current: z.string().max(PASSWORD_MAX_LENGTH).optional(),
    password: z
      .string({ error: "Choose a password" })
      .min(OPERATOR_PASSWORD_MIN_LENGTH, `Use at least ${OPERATOR_PASSWORD_MIN_LENGTH} characters`)
      .max(PASSWORD_MAX_LENGTH, `Use at most ${PASSWORD_MAX_LENGTH} characters`),
    password_confirm: z.string().max(PASSWORD_MAX_LENGTH).optional(),
  })
  .refine((v) => v.password_confirm === undefined || v.password_confirm === v.password, { path: ["password_confirm"], message: "The passwords do not match" });
export type PasswordInput = z.input<typeof passwordInput>;

export class AccountError extends Error {
  constructor(
    readonly field: "current" | "password" | null,
    message: string,
  ) {
    super(message);
    this.name = "AccountError";
  }
}

export interface AccountView {
  email: string;
  name: string | null;
  hasPassword: boolean;
}

export async function accountView(service: Service, operator: Operator): Promise<AccountView> {
  const [row] = await service.db
    .select({ email: users.email, name: users.name, passwordHash: users.passwordHash })
    .from(users)
    .where(and(eq(users.workspaceId, SYSTEM_WORKSPACE_ID), eq(users.id, operator.userId)))
    .limit(1);
  return { email: row?.email ?? operator.email, name: row?.name ?? null, hasPassword: !!row?.passwordHash };
}

/**
 * Sets the signed-in operator's password: with the current one when the account has a password,
 * without when it has none (made without one, or discarded when the mailbox was proven). Every
 * other session of the account ends; the address is told.
 */
export async function setOwnPassword(service: Service, consoleToken: string | null | undefined, input: PasswordInput, meta: { ip?: string | null } = {}): Promise<{ changed: boolean }> {
  const operator = await requireOperator(service, consoleToken);
  const parsed = passwordInput.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AccountError(issue.path[0] === "current" ? "current" : "password", issue.message);
  }
  const [row] = await service.db
    .select({ passwordHash: users.passwordHash, email: users.email })
    .from(users)
    .where(and(eq(users.workspaceId, SYSTEM_WORKSPACE_ID), eq(users.id, operator.userId)))
    .limit(1);
  if (!row) throw new AccountError(null, "This account no longer exists.");
  if (row.passwordHash) {
    const current = parsed.data.current ?? "";
    if (!current || !(await verifyPassword(row.passwordHash, current))) throw new AccountError("current", "This is not the account's current password");
  }
  const passwordHash = await hashPassword(parsed.data.password);
  const now = service.clock.now();
  // Only the hash read above is replaced: a concurrent change (or a discard) wins, this one is refused.
  const [updated] = await service.db
    .update(users)
    .set({ passwordHash, passwordUnproven: false, updatedAt: now })
    .where(
      and(
        eq(users.workspaceId, SYSTEM_WORKSPACE_ID),
        eq(users.id, operator.userId),
        row.passwordHash ? eq(users.passwordHash, row.passwordHash) : isNull(users.passwordHash),
      ),
    )
    .returning({ id: users.id });
  if (!updated) throw new AccountError(null, "The password was changed meanwhile. Reload the page and try again.");
  await endOperatorSessions(service.db, operator.userId, now, "password_changed", {
    consoleSessionId: operator.sessionId,
    hostedSessionId: operator.hostedSessionId,
    grantId: operator.grantId,
  });
  const changed = !!row.passwordHash;
  await recordAudit(service.db, {
    workspaceId: SYSTEM_WORKSPACE_ID,
    type: "console.password_set",
    actor: operator.userId,
    subject: row.email,
    data: { changed },
    ip: meta.ip ?? null,
    at: now,
  });
  mailOperator(
    service,
    plainMessage(row.email, changed ? "Your Latchkey operator password was changed" : "A password was set on your Latchkey operator account", [
      `The password of the Latchkey operator account ${row.email} was ${changed ? "changed" : "set"} at ${now.toISOString().slice(0, 16).replace("T", " ")} UTC${meta.ip ? ` from ${meta.ip}` : ""}. Every other console session of the account was ended.`,
      `If this was not you, sign in to the console with an email code at once and set a new password under "Your account".`,
    ]),
  );
  return { changed };
}

export interface ConsoleSessionInfo {
  id: string;
  createdAt: Date;
  lastSeenAt: Date;
  ip: string | null;
  userAgent: string | null;
  current: boolean;
}

/** The operator's live console sessions, newest first. */
export async function listOwnSessions(service: Service, operator: Operator): Promise<ConsoleSessionInfo[]> {
  const now = service.clock.now();
  const rows = await service.db
    .select({ id: consoleSessions.id, createdAt: consoleSessions.createdAt, lastSeenAt: consoleSessions.lastSeenAt, ip: consoleSessions.ip, userAgent: consoleSessions.userAgent })
    .from(consoleSessions)
    .where(and(eq(consoleSessions.operatorUserId, operator.userId), isNull(consoleSessions.endedAt), gt(consoleSessions.idleExpiresAt, now), gt(consoleSessions.expiresAt, now)))
    .orderBy(desc(consoleSessions.createdAt));
  return rows.map((r) => ({ ...r, current: r.id === operator.sessionId }));
}

/**
 * Ends one of the signed-in operator's console sessions, with the hosted session and grant behind
 * it (unless this browser's own session stands on them too).
 */
export async function endOwnSession(service: Service, consoleToken: string | null | undefined, sessionId: string): Promise<boolean> {
  const operator = await requireOperator(service, consoleToken);
  const now = service.clock.now();
  const [ended] = await service.db
    .update(consoleSessions)
    .set({ endedAt: now, endReason: "ended_by_operator" })
    .where(and(eq(consoleSessions.id, sessionId), eq(consoleSessions.operatorUserId, operator.userId), isNull(consoleSessions.endedAt)))
    .returning({ hostedSessionId: consoleSessions.hostedSessionId, grantId: consoleSessions.grantId });
  if (!ended) return false;
  await service.db
    .update(hostedSessions)
    .set({ endedAt: now, endReason: "ended_by_operator" })
    .where(and(eq(hostedSessions.workspaceId, SYSTEM_WORKSPACE_ID), eq(hostedSessions.id, ended.hostedSessionId), ne(hostedSessions.id, operator.hostedSessionId), eq(hostedSessions.userId, operator.userId), isNull(hostedSessions.endedAt)));
  await service.db
    .update(grants)
    .set({ revokedAt: now, revokeReason: "ended_by_operator" })
    .where(and(eq(grants.workspaceId, SYSTEM_WORKSPACE_ID), eq(grants.id, ended.grantId), ne(grants.id, operator.grantId), eq(grants.userId, operator.userId), isNull(grants.revokedAt)));
  await recordAudit(service.db, { workspaceId: SYSTEM_WORKSPACE_ID, type: "console.session_ended", actor: operator.userId, data: { console_session: sessionId }, at: now });
  return true;
}
