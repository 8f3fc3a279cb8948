import { and, eq, gt, isNull } from "drizzle-orm";
import { authorizationTransactions, users } from "../../db/schema";
import type { Endpoint, EndpointContext } from "../http/context";
import type { TransactionRow } from "../oauth/pending-sign-in";
import { isStorableText } from "../text";
import { evidenceFor } from "../authn/evidence";
import { decoyHash, hashPassword, needsRehash, PASSWORD_MAX_LENGTH, PasswordTurn, PasswordWorkRefused, verifyPassword } from "../authn/password";
import { clientAddress } from "../http/client-address";
import { factorGate } from "../authn/factors/limits";
import { PASSWORD_LIMITS } from "../authn/factors/password";
import { policyFor } from "../authn/policy";
import { passwordFailureReason, recordSignInFailure } from "./failures";
import { identify, signInStep, toSignInPage } from "./flow";
import { homeRealmRedirect } from "./steps/federation";

/**
 * POST /sign-in/password: the password as a first factor (lib/sign-in/flow.ts runs the rest of the
 * sign-in). The client address's turn of password work is taken before anything else: an address
 * with its share of attempts in progress is refused (PasswordWorkRefused, which the route table
 * answers 429 "try again shortly" with Retry-After) before any statement runs or anything is
 * counted, the same for every email (lib/authn/password.ts).
 */
export const passwordSignInEndpoint: Endpoint = async (request, ctx) => {
  const turn = PasswordTurn.take(clientAddress(request, ctx.service.config.trustProxy));
  try {
    return await passwordStep(turn)(request, ctx);
  } finally {
    turn.release();
  }
};

/**
 * The password post's answer when its address had no turn left as it arrived: the production
 * listener answers such a post with this, unread, before handing anything to Next (lib/server).
 */
export const refusedPasswordPostEndpoint: Endpoint = () => Promise.reject(new PasswordWorkRefused());

const passwordStep = (turn: PasswordTurn): Endpoint => signInStep(async (request, ctx, { tx, form }) => {
  if (!(await policyFor(ctx, tx.clientPk)).firstFactors.includes("password")) return toSignInPage(ctx, tx.id, "method_not_allowed");
  const typed = (form.get("email") ?? "").trim();
  const email = typed.toLowerCase();
  const password = form.get("password") ?? "";
  // An email no account can have (too long, or with U+0000, which the database cannot hold) is a wrong credential.
  if (!email || !password || password.length > PASSWORD_MAX_LENGTH || email.length > 320 || !isStorableText(email)) {
    if (email && email.length <= 320 && isStorableText(email)) await rememberAddress(ctx, tx, typed);
    return toSignInPage(ctx, tx.id, "invalid_credentials");
  }

  // An address in a domain an organization verified signs in through its connection (the password is not checked).
  const elsewhere = await homeRealmRedirect(ctx, tx, email);
  if (elsewhere) return elsewhere;

  // Password guessing: when a limit is reached, no password is checked (PASSWORD_LIMITS).
  const gate = await factorGate(ctx, request, PASSWORD_LIMITS, email);
  if (!gate.allowed) {
    await rememberAddress(ctx, tx, typed);
    return toSignInPage(ctx, tx.id, "rate_limited");
  }

  const [user] = await ctx.service.db
    .select({ id: users.id, passwordHash: users.passwordHash, status: users.status })
    .from(users)
    .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.emailNormalized, email)))
    .limit(1);
  // Always run one argon2id verification, in the client address's turn of the hashing queue, so
  // unknown emails and wrong passwords look alike, also in time and in the queue.
  const decoy = await decoyHash();
  let ok: boolean;
  try {
    ok = await verifyPassword(user?.passwordHash ?? decoy, password, turn);
  } catch (error) {
    if (!(error instanceof PasswordWorkRefused)) throw error;
    // The queue is full: no password was checked, nothing is counted.
    await rememberAddress(ctx, tx, typed);
    return toSignInPage(ctx, tx.id, "rate_limited");
  }
  if (!user || !user.passwordHash || !ok || user.status !== "active") {
    await gate.record();
    await recordSignInFailure(ctx, request, { userId: user?.id ?? null, method: "password", reason: passwordFailureReason(user, ok), clientPk: tx.clientPk });
    await rememberAddress(ctx, tx, typed);
    return toSignInPage(ctx, tx.id, "invalid_credentials");
  }
  if (needsRehash(user.passwordHash)) {
    // Only if the hash is still the one just verified (a concurrent password change wins).
    await ctx.service.db
      .update(users)
      .set({ passwordHash: await hashPassword(password) })
      .where(and(eq(users.id, user.id), eq(users.passwordHash, user.passwordHash)));
  }
  if (tx.enteredAddress !== null) await rememberAddress(ctx, tx, null);
  return identify(request, ctx, tx, user.id, evidenceFor("password", ctx.service.clock.now()));
});

/**
 * Keeps the address a first-step form posted on the open transaction (bound to this browser and
 * expiring with it), so the form can show it again after a failure without putting it in the URL.
 */
export async function rememberAddress(ctx: EndpointContext, tx: TransactionRow, address: string | null): Promise<void> {
  const t = authorizationTransactions;
  await ctx.service.db
    .update(t)
    .set({ enteredAddress: address })
    .where(and(eq(t.workspaceId, ctx.workspace.id), eq(t.id, tx.id), isNull(t.completedAt), gt(t.expiresAt, ctx.service.clock.now())));
}
