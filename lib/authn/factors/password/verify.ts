/**
 * The password's one verification, used by the hosted sign-in and the portal's re-verification
 * alike: the factor's guessing gate for the account (PASSWORD_LIMITS), the account checks (it has
 * a password, and its status is `active`), exactly one argon2id verification in the client
 * address's turn of the hashing queue (a decoy hash when there is no account or no password, so
 * every refusal looks and takes alike), the account judged again once the hash is done (disabled
 * or given another password meanwhile: refused), the failure recorded on the gate, and an outdated
 * hash replaced after a success.
 */
import { and, eq } from "drizzle-orm";
import { users } from "../../../../db/schema";
import type { EndpointContext } from "../../../http/context";
import { normalizeEmail } from "../../email-address";
import { evidenceFor, type Evidence } from "../../evidence";
import { decoyHash, hashPassword, needsRehash, PASSWORD_MAX_LENGTH, PasswordWorkRefused, verifyPassword, type HashingFor } from "../../password";
import { factorGate } from "../limits";
import { PASSWORD_LIMITS } from "./password";
import { checkSignedInPassword } from "../../passwords/breached";

/** Why a checked password was refused, as the sign-in's failure record names it. */
export type PasswordRefusal = "unknown_account" | "no_password" | "wrong_password" | "account_disabled";

export type PasswordVerification =
  /** `breached`: the workspace asks this sign-in to replace the password, now known from a breach (lib/authn/passwords/breached.ts). */
  | { ok: true; userId: string; evidence: Evidence; breached: boolean }
  /** A guessing limit reached, or the hashing queue full: nothing was checked, nothing counted. */
  | { ok: false; reason: "limited" }
  /**
   * Refused. `refusal` is null when nothing could be checked (no password, one too long, or an
   * address no account can have) and nothing was counted; otherwise the attempt was counted.
   */
  | { ok: false; reason: "invalid"; userId: string | null; refusal: PasswordRefusal | null };

/** The account to verify: by the address typed (the sign-in), or by the account already known (the portal). */
export type PasswordAccount = { email: string } | { userId: string };

type Ctx = Pick<EndpointContext, "service" | "workspace">;

const accountColumns = { id: users.id, passwordHash: users.passwordHash, status: users.status, normalized: users.emailNormalized, breachedPasswordHash: users.breachedPasswordHash };

async function findAccount(ctx: Ctx, account: PasswordAccount) {
  const where = "email" in account ? eq(users.emailNormalized, account.email) : eq(users.id, account.userId);
  const [row] = await ctx.service.db
    .select(accountColumns)
    .from(users)
    .where(and(eq(users.workspaceId, ctx.workspace.id), where))
    .limit(1);
  return row as typeof row | undefined;
}

const uncounted = (userId: string | null): PasswordVerification => ({ ok: false, reason: "invalid", userId, refusal: null });

/**
 * Verifies `password` for the account. `who` is the client address's turn of the hashing queue
 * (lib/authn/password.ts `HashingFor`).
 */
export async function verifyPasswordFactor(ctx: EndpointContext, request: Request, account: PasswordAccount, password: string, who: HashingFor): Promise<PasswordVerification> {
  if (!password || password.length > PASSWORD_MAX_LENGTH) return uncounted("userId" in account ? account.userId : null);
  let email: string | null;
  let user: Awaited<ReturnType<typeof findAccount>>;
  if ("email" in account) {
    email = normalizeEmail(account.email);
    if (email === null) return uncounted(null);
    user = undefined; // read after the gate: a limited attempt costs no statement
  } else {
    user = await findAccount(ctx, account);
    if (!user) return uncounted(account.userId);
    email = user.normalized;
  }

  // Password guessing: when a limit is reached, no password is checked (PASSWORD_LIMITS).
  const gate = await factorGate(ctx, request, PASSWORD_LIMITS, email);
  if (!gate.allowed) return { ok: false, reason: "limited" };
  if ("email" in account) user = await findAccount(ctx, { email });

  // Always one argon2id verification, so unknown accounts and wrong passwords look alike, also in time and in the queue.
  const decoy = await decoyHash();
  let matched: boolean;
  try {
    matched = await verifyPassword(user?.passwordHash ?? decoy, password, who);
  } catch (error) {
    if (error instanceof PasswordWorkRefused) return { ok: false, reason: "limited" };
    throw error;
  }
  const refuse = async (refusal: PasswordRefusal): Promise<PasswordVerification> => {
    await gate.record();
    return { ok: false, reason: "invalid", userId: user?.id ?? null, refusal };
  };
  if (!user) return refuse("unknown_account");
  if (!user.passwordHash) return refuse("no_password");
  if (!matched) return refuse("wrong_password");
  // The account as it is once the hash is done (a hash may wait its turn for a while): the password
  // verified must still be its password, and the account active.
  const after = await findAccount(ctx, { userId: user.id });
  if (!after) return refuse("unknown_account");
  if (after.passwordHash !== user.passwordHash) return refuse("wrong_password");
  if (after.status !== "active") return refuse("account_disabled");
  let current = user.passwordHash;
  if (needsRehash(user.passwordHash)) {
    // Only if the hash is still the one just verified (a concurrent password change wins).
    const rehashed = await hashPassword(password);
    const [updated] = await ctx.service.db
      .update(users)
      .set({ passwordHash: rehashed })
      .where(and(eq(users.id, user.id), eq(users.passwordHash, user.passwordHash)))
      .returning({ id: users.id });
    if (updated) current = rehashed;
  }
  // Known from breaches since it was set? The policy and the bundled list are read here; the range service after the answer (lib/authn/passwords/breached.ts).
  const breached = await checkSignedInPassword(ctx, user.id, current, password, after.breachedPasswordHash === current);
  return { ok: true, userId: user.id, evidence: evidenceFor("password", ctx.service.clock.now()), breached };
}
