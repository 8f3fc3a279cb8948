/**
 * A typed code as a further factor in the sign-in: one endpoint for every factor answered by a
 * typed code (lib/authn/factors/contract.ts `TypedCodeAnswer`: an authenticator app's code, a
 * recovery code), bound at the path the factor declares.
 *
 * It acts only at the `second_factor` step and only when the step offers the factor's kind. The
 * factor's guessing gate is counted for the account; a limited attempt is not checked and answers
 * like a wrong code. A wrong code is recorded on the gate and as a failed sign-in under the
 * factor's name (`failedSignIn`), and the page shows the factor's own error; a right one is proved.
 */
import { and, eq } from "drizzle-orm";
import { users } from "../../../db/schema";
import { clientAddressOf } from "../../http/client-address";
import type { Endpoint, EndpointContext } from "../../http/context";
import type { Route } from "../../http/route";
import { TYPED_CODE_FACTORS, type FactorKind, type TypedCodeFactor } from "../../authn/factors/registry";
import { factorGate, type Gate, type GuessingLimits } from "../../authn/factors/limits";
import { currentStep, prove, signInStep, toSignInPage } from "../flow";
import { recordSignInFailure } from "../failures";

/** The account's address, as typed and normalized, in this workspace. */
export async function accountEmail(ctx: EndpointContext, userId: string): Promise<{ email: string; normalized: string } | null> {
  const [user] = await ctx.service.db
    .select({ email: users.email, normalized: users.emailNormalized })
    .from(users)
    .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.id, userId)))
    .limit(1);
  return user ?? null;
}

/**
 * The guessing limits a further factor declares, for the account's email, as the portal counts
 * them. A limited attempt is not checked and answers like a wrong code.
 */
async function furtherFactorGate(ctx: EndpointContext, request: Request, userId: string, limits: GuessingLimits): Promise<Gate> {
  const user = await accountEmail(ctx, userId);
  return user ? factorGate(ctx, request, limits, user.normalized) : { allowed: false, retryAfterSeconds: 0 };
}

/** POST at the factor's `signInPath`: its code as a further factor at the `second_factor` step. */
function typedCodeSignInEndpoint({ answer, failedSignIn }: TypedCodeFactor): Endpoint {
  return signInStep(async (request, ctx, { tx, form }) => {
    const { step } = await currentStep(ctx, tx, request.headers.get("cookie"));
    if (step.kind !== "second_factor" || !(step.options as readonly FactorKind[]).includes(answer.kind) || !tx.userId) return toSignInPage(ctx, tx.id);
    const gate = await furtherFactorGate(ctx, request, tx.userId, answer.gate);
    const ip = clientAddressOf(request.headers, ctx.service.config.trustProxy);
    const result = gate.allowed ? await answer.check(ctx, tx.userId, form.get("code") ?? "", ip) : null;
    if (!result?.ok) {
      if (gate.allowed) {
        await gate.record();
        await recordSignInFailure(ctx, request, { userId: tx.userId, method: failedSignIn, reason: "wrong_code", clientPk: tx.clientPk });
      }
      return toSignInPage(ctx, tx.id, answer.wrong);
    }
    return prove(request, ctx, tx, result.evidence);
  });
}

/** One sign-in step per factor answered by a typed code, at its declared path, in the registry's order. */
export const typedCodeRoutes: Route[] = TYPED_CODE_FACTORS.map((factor): Route => ({
  method: "POST",
  path: factor.answer.signInPath,
  endpoint: typedCodeSignInEndpoint(factor),
  machine: false,
  errors: "hosted",
}));
