/**
 * The sign-in's outcomes as the domain metrics count them (`latchkey_sign_ins_total{method,outcome}`,
 * lib/metrics): each factor a step verified, where the flow records it on the pending sign-in
 * (./flow.ts `identify`, `prove`), and each factor a step refused, where the refusal is recorded
 * as the audit event `sign_in.failed` (./failures.ts, with the methods as that event names them).
 * Attempts the guessing limits refuse before anything is checked are the limiter's
 * (`latchkey_rate_limit_refusals_total`), as they are not in the audit log either.
 */
import type { Evidence, EvidenceMethod } from "../authn/evidence";
import { countSignIn, type SignInMethod } from "../metrics";

/** Each local factor's method as the metric names it (the type check fails when a factor is added without one). */
const VERIFIED: Record<Exclude<EvidenceMethod, "federated" | "federated_mfa">, SignInMethod> = {
  password: "password",
  email_otp: "email_code",
  passkey: "passkey",
  security_key: "security_key",
  totp: "totp",
  recovery_code: "recovery_code",
};

/** The method of a verified factor: a federated sign-in by its source (`connection:<id>` or `social:<id>`, lib/federation/identities.ts). */
export function signInMethodOf(event: Pick<Evidence, "method" | "factorId">): SignInMethod {
  if (event.method === "federated" || event.method === "federated_mfa") return event.factorId?.startsWith("social:") ? "social" : "enterprise";
  return VERIFIED[event.method];
}

export function countVerified(event: Evidence): void {
  countSignIn(signInMethodOf(event), "success");
}
