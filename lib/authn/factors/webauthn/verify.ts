/**
 * The WebAuthn factor's one verification (passkeys and security keys), used by the sign-in (a
 * passkey as the first factor, a key as a further factor, step-up included) and the portal's
 * verification alike: the factor's guessing gate (WEBAUTHN_LIMITS: per client address when the
 * assertion is to identify the user, per account and address when the user is known), the
 * assertion checked once (./webauthn.ts `checkAssertion`: the challenge consumed by one conditional
 * UPDATE, the credential looked up and judged, the signature, the counter), the account judged once
 * the assertion verified (still in the workspace and `active`, as the password's and the email
 * code's verifications judge it), and every refusal recorded on the gate. A limited attempt is not
 * checked. What a refusal is shown as, and in the sign-in the failed sign-in recorded, is the
 * caller's.
 */
import { and, eq } from "drizzle-orm";
import { users } from "../../../../db/schema";
import type { EndpointContext } from "../../../http/context";
import type { ChallengeBinding, VerifyResult } from "../contract";
import { factorGate } from "../limits";
import { checkAssertion, WEBAUTHN_LIMITS, type AssertionExpectation } from "./webauthn";

export type WebAuthnVerification =
  | VerifyResult
  /** A guessing limit reached: nothing was checked (the challenge is not consumed), nothing counted. */
  | { ok: false; reason: "limited" };

/** Whether the account is in this workspace and active. */
async function activeAccount(ctx: Pick<EndpointContext, "service" | "workspace">, userId: string): Promise<boolean> {
  const [user] = await ctx.service.db
    .select({ status: users.status })
    .from(users)
    .where(and(eq(users.workspaceId, ctx.workspace.id), eq(users.id, userId)))
    .limit(1);
  return user?.status === "active";
}

/**
 * Verifies the assertion the browser posted (`responseText`) against a challenge issued for
 * `binding`, for the user `expected` names (null: the assertion identifies the user, a passkey
 * sign-in) and the kinds it accepts.
 */
export async function verifyWebAuthnFactor(
  ctx: EndpointContext,
  request: Request,
  binding: ChallengeBinding,
  responseText: string | null,
  expected: AssertionExpectation,
): Promise<WebAuthnVerification> {
  const gate = await factorGate(ctx, request, WEBAUTHN_LIMITS, expected.userId);
  if (!gate.allowed) return { ok: false, reason: "limited" };
  let result = await checkAssertion(ctx, binding, responseText, expected);
  // A disabled account's valid assertion is refused like a wrong one (and counted).
  if (result.ok && !(await activeAccount(ctx, result.userId))) result = { ok: false, reason: "invalid" };
  if (!result.ok) await gate.record();
  return result;
}
