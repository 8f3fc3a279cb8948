/**
 * The console's side of an operator account's own credentials, which belong only to whoever proved
 * the mailbox (lib/operators/accounts.ts):
 *
 * - A password set before the proof (`users.password_unproven`: accounts made by the invitation flow
 *   of earlier releases, whose password whoever held the link chose) is refused on its own at the
 *   console's sign-in (`checkConsoleSignIn`), and discarded when the mailbox is proven: by signing
 *   in with an email code, or by an invitation's code (`mailboxProven`). Every other session of the
 *   account ends then, and the person is asked to set their own password or go on without one.
 * - The signed-in operator changes (or sets) their password here (the rule:
 *   lib/operators/accounts.ts `changeOwnPassword`), sees their console sessions and ends them.
 */
import { and, desc, eq, gt, isNull, ne } from "drizzle-orm";
import type { Database } from "../../db/client";
import { consoleSessions, grants, hostedSessions, users } from "../../db/schema";
import { recordAudit } from "../audit/events";
import { changeOwnPassword, endOperatorSessions, mailboxProven, type PasswordInput } from "../operators/accounts";
import type { Service } from "../service";
import { requireOperator, type Operator } from "./authz";
import { SYSTEM_WORKSPACE_ID } from "./system";
import { EMAIL_CODE_EVIDENCE } from "../authn/factors/email-code/evidence";

export { AccountError, accountView, passwordInput, type AccountView, type PasswordInput } from "../operators/accounts";

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

/**
 * Sets the signed-in operator's own password (lib/operators/accounts.ts `changeOwnPassword`):
 * ConsoleAccessError("unauthenticated") without a live console session.
 */
export async function setOwnPassword(service: Service, consoleToken: string | null | undefined, input: PasswordInput, meta: { ip?: string | null } = {}): Promise<{ changed: boolean }> {
  return changeOwnPassword(service, await requireOperator(service, consoleToken), input, meta);
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
