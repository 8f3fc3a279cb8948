/**
 * Operator accounts: users of the system workspace (lib/operators/system.ts), installation-wide,
 * whose credentials belong only to whoever proved the mailbox.
 *
 * - An account is made only after its mailbox is proven (setup's link, printed to the installation;
 *   an invitation's code, sent to the invited address: lib/operators/invitations.ts), with the
 *   password its owner chose, or none (email codes).
 * - A password set before the proof (`users.password_unproven`: accounts made by the invitation flow
 *   of earlier releases, whose password whoever held the link chose) is discarded when the mailbox
 *   is proven (`mailboxProven`): by signing in to the console with an email code, or by an
 *   invitation's code. Every other session of the account ends then.
 * - Mail to an operator goes through the system workspace (`mailOperator`).
 */
import { and, eq, isNull, ne } from "drizzle-orm";
import type { Database } from "../../db/client";
import { consoleSessions, grants, hostedSessions, users } from "../../db/schema";
import { recordAudit } from "../audit/events";
import { normalizeEmail } from "../authn/email-address";
import type { MailMessage } from "../authn/email/outbox";
import { emailAvailable, sendMail } from "../authn/email/transport";
import { newId } from "../crypto";
import type { Service } from "../service";
import { SYSTEM_WORKSPACE_ID, SYSTEM_WORKSPACE_NAME } from "./system";

/** The shortest password an operator may choose (setup, an invitation, their own account page). */
export const OPERATOR_PASSWORD_MIN_LENGTH = 12;

/**
 * An operator account: a user of the system workspace, made only once its mailbox is proven
 * (setup's link, printed to the installation; the code an invitation sends to the address), with
 * the password its owner chose, or none (email codes). `email` is an address the caller parsed
 * (lib/authn/email-address.ts). Returns its id.
 */
export async function createOperatorAccount(db: Database, input: { email: string; name: string | null; passwordHash: string | null; now: Date }): Promise<string> {
  const emailNormalized = normalizeEmail(input.email);
  if (!emailNormalized) throw new TypeError("an operator account needs a parsed email address");
  const id = newId();
  await db.insert(users).values({
    id,
    workspaceId: SYSTEM_WORKSPACE_ID,
    email: input.email,
    emailNormalized,
    emailVerified: true,
    name: input.name,
    passwordHash: input.passwordHash,
    status: "active",
    createdAt: input.now,
    updatedAt: input.now,
  });
  return id;
}

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

/** Mail to an operator goes through the system workspace (its outbox is no tenant's to read); false when this server cannot send email. */
export function mailOperator(service: Service, message: MailMessage): boolean {
  if (!emailAvailable(service.config)) return false;
  sendMail({ service, workspace: { id: SYSTEM_WORKSPACE_ID, name: SYSTEM_WORKSPACE_NAME } }, message);
  return true;
}
