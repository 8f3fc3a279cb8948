/**
 * A typed code as a further factor in the sign-in: one endpoint for every factor answered by a
 * typed code (lib/authn/factors/contract.ts `TypedCodeAnswer`: an authenticator app's code, a
 * recovery code), bound at the path the factor declares.
 *
 * It acts only at the `second_factor` step and only when the step offers the factor's kind. The
 * code is verified by the factor's one verification (lib/authn/factors/typed-code.ts: its
 * guessing gate for the account, the check, a wrong code recorded on the gate); a limited attempt
 * answers like a wrong code. A wrong code is also recorded as a failed sign-in under the factor's
 * name (`failedSignIn`), and the page shows the factor's own error; a right one is proved.
 */
import type { Endpoint } from "../../http/context";
import type { Route } from "../../http/route";
import { TYPED_CODE_FACTORS, type FactorKind, type TypedCodeFactor } from "../../authn/factors/registry";
import { currentStep, prove, signInStep, toSignInPage } from "../flow";
import { recordSignInFailure } from "../failures";

/** POST at the factor's `signInPath`: its code as a further factor at the `second_factor` step. */
function typedCodeSignInEndpoint({ answer, failedSignIn, verify }: TypedCodeFactor): Endpoint {
  return signInStep(async (request, ctx, { tx, form }) => {
    const { step } = await currentStep(ctx, tx, request.headers.get("cookie"));
    if (step.kind !== "second_factor" || !(step.options as readonly FactorKind[]).includes(answer.kind) || !tx.userId) return toSignInPage(ctx, tx.id);
    const result = await verify(ctx, request, tx.userId, form.get("code") ?? "");
    if (!result.ok) {
      if (result.reason === "invalid") await recordSignInFailure(ctx, request, { userId: tx.userId, method: failedSignIn, reason: "wrong_code", clientPk: tx.clientPk });
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
