/**
 * A new password the sign-in asks for (the transaction's `password_change`), and its replacing the
 * old one. Two reasons:
 *
 * - `reset`: the user proved the account's mailbox with a code to reset a forgotten password
 *   (lib/sign-in/steps/password-reset.ts). The new password is asked first; where the account holds
 *   a further factor (an authenticator app, a security key, a passkey, or a recovery code beside
 *   one), it must be proved too before the password changes: a mailbox alone does not take an
 *   account that has more. An account that holds none changes its password on the mailbox's proof,
 *   and the application's policy (MFA included) then asks what it asks of any sign-in.
 * - `breached`: the password the user signed in with is now known from a breach (./breached.ts).
 *   Asked once the application's policy is otherwise met, so only the account's holder changes it.
 *
 * Once nothing is missing, the change is one database transaction: the transaction's new password
 * is claimed (a double submission changes it once), the account's password replaced, and every
 * hosted session, refresh family and portal session of the account ended; the sign-in then shows
 * `password_changed` once (the user is told), and goes on.
 */
import { and, eq, gt, inArray, isNull, TransactionRollbackError } from "drizzle-orm";
import { accountSecurityPortalSessions, authorizationTransactions, grants, hostedSessions, users } from "../../../db/schema";
import { recordAudit } from "../../audit/events";
import type { EndpointContext } from "../../http/context";
import { clientAddressOf } from "../../http/client-address";
import type { SecondFactorOption } from "../policy";

type Transaction = typeof authorizationTransactions.$inferSelect;

/** The steps a new password adds to the sign-in: the form for it, and the notice once it changed. */
export type PasswordChangeStep =
  | { kind: "new_password"; reason: "reset" | "breached" }
  /** The password changed and the account's other sessions ended: said once, then the sign-in goes on. */
  | { kind: "password_changed" };

/**
 * What a reset asks before the application's policy does: the new password, then one of the
 * account's further factors it has not proved (`further`: lib/authn/policy.ts
 * `resetFurtherFactors`; null when none is missing). Null when neither is missing (or no reset is
 * under way).
 */
export function resetStep(tx: Transaction, further: SecondFactorOption[] | null): PasswordChangeStep | { kind: "second_factor"; options: SecondFactorOption[] } | null {
  if (tx.passwordChange !== "reset" || !tx.userId) return null;
  if (!tx.newPasswordHash) return { kind: "new_password", reason: "reset" };
  return further ? { kind: "second_factor", options: further } : null;
}

/** Whether the chosen new password may replace the old one now: nothing the change asks is missing. */
export function changeReady(tx: Transaction, further: SecondFactorOption[] | null): boolean {
  if (!tx.newPasswordHash || !tx.userId) return false;
  return tx.passwordChange === "breached" || (tx.passwordChange === "reset" && resetStep(tx, further) === null);
}

/**
 * Keeps the chosen new password's hash on the transaction while the step asks for one: once, so a
 * second post (another tab, a double click) finds it taken and changes nothing. Null then.
 */
export async function chooseNewPassword(ctx: EndpointContext, tx: Transaction, reason: "reset" | "breached", hash: string): Promise<Transaction | null> {
  const t = authorizationTransactions;
  const [row] = await ctx.service.db
    .update(t)
    .set({ newPasswordHash: hash })
    .where(
      and(
        eq(t.workspaceId, ctx.workspace.id),
        eq(t.id, tx.id),
        eq(t.userId, tx.userId ?? ""),
        eq(t.passwordChange, reason),
        isNull(t.newPasswordHash),
        isNull(t.completedAt),
        gt(t.expiresAt, ctx.service.clock.now()),
      ),
    )
    .returning();
  return row ?? null;
}

/**
 * Replaces the account's password with the transaction's new one, in one database transaction,
 * and ends the account's sessions. Null when it cannot: the transaction or its new password was
 * taken meanwhile (a parallel post), or the account is no longer active.
 */
export async function applyPasswordChange(request: Request, ctx: EndpointContext, tx: Transaction): Promise<Transaction | null> {
  const now = ctx.service.clock.now();
  const wid = ctx.workspace.id;
  const userId = tx.userId;
  const hash = tx.newPasswordHash;
  const via = tx.passwordChange;
  if (!userId || !hash || (via !== "reset" && via !== "breached")) return null;
  const t = authorizationTransactions;
  const done = await ctx.service.db.transaction(async (db) => {
    const [claimed] = await db
      .update(t)
      .set({ newPasswordHash: null, passwordChange: "changed" })
      .where(and(eq(t.workspaceId, wid), eq(t.id, tx.id), eq(t.userId, userId), eq(t.newPasswordHash, hash), isNull(t.completedAt), gt(t.expiresAt, now)))
      .returning();
    if (!claimed) return null;
    const [changed] = await db
      .update(users)
      .set({ passwordHash: hash, updatedAt: now })
      .where(and(eq(users.workspaceId, wid), eq(users.id, userId), eq(users.status, "active")))
      .returning({ id: users.id });
    // Disabled meanwhile: nothing changes, the claim included.
    if (!changed) db.rollback();
    const ended = await db
      .update(hostedSessions)
      .set({ endedAt: now, endReason: "password_changed" })
      .where(and(eq(hostedSessions.workspaceId, wid), eq(hostedSessions.userId, userId), isNull(hostedSessions.endedAt)))
      .returning({ id: hostedSessions.id });
    const revoked =
      ended.length === 0
        ? []
        : await db
            .update(grants)
            .set({ revokedAt: now, revokeReason: "password_changed" })
            .where(and(eq(grants.workspaceId, wid), inArray(grants.sessionId, ended.map((s) => s.id)), isNull(grants.revokedAt)))
            .returning({ id: grants.id });
    await db
      .update(accountSecurityPortalSessions)
      .set({ endedAt: now })
      .where(and(eq(accountSecurityPortalSessions.workspaceId, wid), eq(accountSecurityPortalSessions.userId, userId), isNull(accountSecurityPortalSessions.endedAt)));
    await recordAudit(db, {
      workspaceId: wid,
      type: "password.changed",
      subject: userId,
      clientId: null,
      data: { via, sessions_ended: ended.length, grants_ended: revoked.length },
      ip: clientAddressOf(request.headers, ctx.service.config.trustProxy),
      at: now,
    });
    return claimed;
  }).catch((error: unknown) => {
    if (error instanceof TransactionRollbackError) return null;
    throw error;
  });
  return done;
}
