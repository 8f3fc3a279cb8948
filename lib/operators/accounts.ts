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
 * - The operator changes (or sets) their own password (`changeOwnPassword`): every other session
 *   of the account ends, and the address is told.
 * - Mail to an operator goes through the system workspace (`mailOperator`).
 */
import { and, eq, isNull, ne } from "drizzle-orm";
import { endAccountSessions, mailboxProven as proven, type KeptSession } from "../authn/mailbox-proof";
import { z } from "zod";
import type { Database } from "../../db/client";
import { consoleSessions, grants, hostedSessions, users } from "../../db/schema";
import { recordAudit } from "../audit/events";
import { normalizeEmail } from "../authn/email-address";
import type { MailMessage } from "../authn/email/outbox";
import { plainMessage } from "../authn/email/plain-message";

export { plainMessage };
import { emailAvailable, sendMail } from "../authn/email/transport";
import { screenOperatorPassword } from "../authn/passwords/policy";
import { PasswordRefused } from "../authn/passwords/screening";
import { hashPassword, PASSWORD_MAX_LENGTH, verifyPassword } from "../authn/password";
import { newId } from "../crypto";
import type { Service } from "../service";
import type { Operator } from "../surfaces/operation";
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

export type { KeptSession } from "../authn/mailbox-proof";

/**
 * Ends every session of the operator account but `keep`'s: console sessions, and the system
 * workspace's hosted sessions and grants (whose tokens die with them).
 */
export function endOperatorSessions(db: Database, userId: string, now: Date, reason: string, keep: KeptSession = {}): Promise<void> {
  return endAccountSessions(db, { workspaceId: SYSTEM_WORKSPACE_ID, userId, now, reason, keep }).then(() => undefined);
}

/**
 * The mailbox of operator `userId` was just proven: the one rule (lib/authn/mailbox-proof.ts). A
 * password set before any proof is discarded and every session but `keep` ends. Returns whether a
 * password was discarded; the caller then asks the person to set their own.
 */
export function mailboxProven(db: Database, userId: string, now: Date, keep: KeptSession = {}): Promise<boolean> {
  return proven(db, { workspaceId: SYSTEM_WORKSPACE_ID, userId }, now, "console.password_discarded", keep);
}

/** Mail to an operator goes through the system workspace (its outbox is no tenant's to read); false when this server cannot send email. */
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
 * Sets an operator's own password (the signed-in operator, resolved by the console from its
 * session): with the current one when the account has a password, without when it has none (made
 * without one, or discarded when the mailbox was proven). Every other session of the account
 * ends; the address is told.
 */
export async function changeOwnPassword(service: Service, operator: Operator, input: PasswordInput, meta: { ip?: string | null } = {}): Promise<{ changed: boolean }> {
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
  try {
    await screenOperatorPassword(service, parsed.data.password, [row.email]);
  } catch (error) {
    if (error instanceof PasswordRefused) throw new AccountError("password", error.message);
    throw error;
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
