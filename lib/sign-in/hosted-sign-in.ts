import { and, eq, gt, isNull } from "drizzle-orm";
import { authorizationTransactions } from "../../db/schema";
import type { Endpoint, EndpointContext } from "../http/context";
import type { TransactionRow } from "../oauth/pending-sign-in";
import { isStorableText } from "../text";
import { botCheck } from "../authn/bot-challenge/gate";
import { EMAIL_MAX_LENGTH, normalizeEmail } from "../authn/email-address";
import { PasswordTurn, PasswordWorkRefused } from "../authn/password";
import { clientAddress } from "../http/client-address";
import { verifyPasswordFactor } from "../authn/factors/password";
import { policyFor } from "../authn/policy";
import { recordSignInFailure } from "./failures";
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
  const password = form.get("password") ?? "";
  // An address in a domain an organization verified signs in through its connection (the password is not checked).
  const email = normalizeEmail(typed);
  if (email && password) {
    const elsewhere = await homeRealmRedirect(ctx, tx, email);
    if (elsewhere) return elsewhere;
  }

  // Where the workspace asks a proof of work (lib/authn/bot-challenge), nothing is checked without it.
  const bot = await botCheck(request, ctx, tx, form, email);
  if (!bot.ok) {
    if (typed && typed.length <= EMAIL_MAX_LENGTH && isStorableText(typed)) await rememberAddress(ctx, tx, typed);
    return toSignInPage(ctx, tx.id, "bot_check");
  }

  // The password factor's one verification: its gate, the account's checks, the failure counted (lib/authn/factors/password).
  const result = await verifyPasswordFactor(ctx, request, { email: typed }, password, turn);
  if (!result.ok) {
    if (result.reason === "invalid" && result.refusal !== null) {
      bot.count();
      await recordSignInFailure(ctx, request, { userId: result.userId, method: "password", reason: result.refusal, clientPk: tx.clientPk });
    }
    if (typed && typed.length <= EMAIL_MAX_LENGTH && isStorableText(typed)) await rememberAddress(ctx, tx, typed);
    return toSignInPage(ctx, tx.id, result.reason === "limited" ? "rate_limited" : "invalid_credentials");
  }
  if (tx.enteredAddress !== null) await rememberAddress(ctx, tx, null);
  return identify(request, ctx, tx, result.userId, result.evidence, { breached: result.breached });
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
