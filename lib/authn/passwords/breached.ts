/**
 * Passwords that became known from breaches after they were set: at a successful password sign-in
 * in a workspace that screens passwords (./policy.ts), the password just verified is checked
 * against the bundled list and the breach range service (./screening.ts, ./breach-range.ts), after
 * the answer (the sign-in never waits for it). A breached one is recorded as the account's
 * `breached_password_hash` (the hash it was found under): the account still has a breached
 * password while that equals its `password_hash`, and any new password ends it with no other
 * write. The console's Passwords page counts those accounts (`breachedPasswordCount`).
 */
import { and, count, eq, isNotNull, sql } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { users } from "../../../db/schema";
import type { Config } from "../../config";
import { logError } from "../../http/log";
import { breachRangeCheck } from "./breach-range";
import { loadPasswordPolicy } from "./policy";
import { isCommonPassword } from "./screening";

type Ctx = { service: { db: Database; config: Pick<Config, "passwordBreachRangeUrl">; fetch: typeof fetch; clock: { now(): Date } }; workspace: { id: string } };

/**
 * Checks the password `userId` just signed in with (whose stored hash is `passwordHash`;
 * `recorded`: an earlier check found it breached) and records it when breached. Resolves once the
 * workspace's policy is read and the bundled list looked up (in memory): nothing else is queried
 * where nothing is screened, so no statement outlives the sign-in there. Where it screens, the
 * range service and the record follow in the background.
 *
 * Resolves to whether the sign-in must replace the password before it completes: the workspace
 * screens and offers resets (a user who could not choose a new one would be stuck), and the
 * password is known breached now, by an earlier check or the list. The range service's answer is
 * not waited for: it is recorded, and asked of the next sign-in. Never rejects (a failure is
 * logged, and asks nothing).
 */
export async function checkSignedInPassword(ctx: Ctx, userId: string, passwordHash: string, password: string, recorded: boolean): Promise<boolean> {
  const failed = (error: unknown) => logError("a signed-in password could not be checked against the breached ones", error instanceof Error ? error.message : String(error));
  let ask: boolean;
  let common: boolean;
  try {
    const policy = await loadPasswordPolicy(ctx.service.db, ctx.workspace.id);
    if (!policy.screening) return false;
    ask = policy.reset === "email";
    if (recorded) return ask;
    common = await isCommonPassword(password);
  } catch (error) {
    failed(error);
    return false;
  }
  void (async () => {
    if (!common && !((await breachRangeCheck(ctx.service)?.(password)) ?? false)) return;
    // Only while that hash is still the account's password (a change meanwhile wins).
    await ctx.service.db
      .update(users)
      .set({ breachedPasswordHash: passwordHash })
      .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.id, userId), eq(users.passwordHash, passwordHash)));
  })().catch(failed);
  return ask && common;
}

/** How many of the workspace's accounts still sign in with a password found breached. */
export async function breachedPasswordCount(db: Database, workspaceId: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(users)
    .where(and(eq(users.workspaceId, workspaceId), isNotNull(users.passwordHash), sql`${users.breachedPasswordHash} = ${users.passwordHash}`));
  return row?.n ?? 0;
}
