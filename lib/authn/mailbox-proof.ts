/**
 * Credentials belong to whoever proved the mailbox: the one rule, for every account of every
 * workspace (an operator's in the system workspace, lib/operators/accounts.ts; a workspace user's
 * joining an organization by invitation, lib/organizations/invitations).
 *
 * A password set before the account's mailbox was proven (`users.password_unproven`, or any
 * password of an account whose address is not verified: whoever set it never proved the address)
 * does not survive the proof: it is discarded, the address is verified, and every session of the
 * account but the one making the proof ends (hosted sessions, their grants, portal sessions, and an
 * operator's console sessions). One conditional UPDATE: of parallel proofs one discards it.
 */
import { and, eq, isNotNull, or } from "drizzle-orm";
import type { Database } from "../../db/client";
import { users } from "../../db/schema";
import { recordAudit } from "../audit/events";
import { endAccountSessions, type KeptSession } from "./hosted-session";

export { endAccountSessions, type KeptSession };

/**
 * The mailbox of account `userId` was just proven. The address is verified; a password set before
 * any proof is discarded and every session but `keep` ends, recorded as `audit`. Returns whether a
 * password was discarded (the caller then lets the person set their own).
 */
export async function mailboxProven(
  db: Database,
  account: { workspaceId: string; userId: string },
  now: Date,
  audit: "console.password_discarded" | "user.password_discarded",
  keep: KeptSession = {},
): Promise<boolean> {
  const { workspaceId, userId } = account;
  const [discarded] = await db
    .update(users)
    .set({ passwordHash: null, passwordUnproven: false, emailVerified: true, updatedAt: now })
    .where(and(eq(users.workspaceId, workspaceId), eq(users.id, userId), or(eq(users.passwordUnproven, true), and(eq(users.emailVerified, false), isNotNull(users.passwordHash)))))
    .returning({ id: users.id, email: users.email });
  if (!discarded) {
    // Nothing to discard: the proof still verifies the address.
    await db
      .update(users)
      .set({ emailVerified: true, updatedAt: now })
      .where(and(eq(users.workspaceId, workspaceId), eq(users.id, userId), eq(users.emailVerified, false)));
    return false;
  }
  await endAccountSessions(db, { workspaceId, userId, now, reason: "mailbox_proven", keep });
  await recordAudit(db, { workspaceId, type: audit, actor: userId, subject: audit === "user.password_discarded" ? userId : discarded.email, data: {}, at: now });
  return true;
}
