/**
 * A failed sign-in, recorded for the workspace's administrators (audit `sign_in.failed`, counted
 * per day on the console's overview): which account when one exists, the method, why, from
 * where, and the client. Never the password, and never the address as typed (people type
 * passwords into the email field): an unknown account is recorded without a subject. Wrong
 * second-factor codes and refused passkeys / security keys are recorded the same way. Attempts
 * the guessing limits refuse before any password is checked are not recorded (they are the
 * limiter's, and recording them would let a flood write without bound). Each recorded failure is
 * also signalled (`sign_in_factor`, lib/signals; the metrics count it as
 * `latchkey_sign_ins_total{outcome="failure"}`, ./outcomes.ts).
 */
import { recordAudit } from "../audit/events";
import type { PasswordRefusal } from "../authn/factors/password";
import type { FACTORS } from "../authn/factors/registry";
import type { EndpointContext } from "../http/context";
import { clientAddressOf } from "../http/client-address";
import { signal } from "../signals";

export type SignInFailureReason = PasswordRefusal | "wrong_code" | "assertion_failed" | "credential_refused";
/** The factor that failed, as its descriptor names its failures (`failedSignIn`: one name for a passkey or a security key). */
export type SignInFailureMethod = NonNullable<(typeof FACTORS)[number]["failedSignIn"]>;

export async function recordSignInFailure(
  ctx: EndpointContext,
  request: Request,
  input: { userId: string | null; method: SignInFailureMethod; reason: SignInFailureReason; clientPk?: string | null },
): Promise<void> {
  await recordAudit(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    type: "sign_in.failed",
    subject: input.userId,
    reason: input.reason,
    data: { method: input.method, ...(input.clientPk ? { client: input.clientPk } : {}) },
    ip: clientAddressOf(request.headers, ctx.service.config.trustProxy),
    at: ctx.service.clock.now(),
  });
  // Signalled under the same name (a refused WebAuthn answer is not known to be a passkey or a security key).
  signal("sign_in_factor", { method: input.method, outcome: "failure" });
}
