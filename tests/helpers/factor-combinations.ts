/**
 * Every combination the factors' derived rules are checked over: what a user holds (none, one, two
 * of each kind; a recovery-code set or none; a password or not) and every policy (each ordered
 * choice of first factors, MFA off or required, each passkey enrolment).
 */
import { FIRST_FACTORS, MFA_MODES, PASSKEY_ENROLLMENT, type AuthPolicy, type EnrolledSummary, type FirstFactor } from "../../lib/authn/policy";

export function* summaries(): Generator<EnrolledSummary> {
  for (const hasPassword of [true, false])
    for (const passkey of [0, 1, 2])
      for (const security_key of [0, 1, 2])
        for (const totp of [0, 1, 2]) for (const recovery_code of [0, 3]) yield { hasPassword, passkey, security_key, totp, recovery_code };
}

const orderings = (items: readonly FirstFactor[]): FirstFactor[][] =>
  items.length === 0 ? [[]] : items.flatMap((f, i) => orderings([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [f, ...rest]));
const choices = (items: readonly FirstFactor[]): FirstFactor[][] =>
  items.length === 0 ? [[]] : choices(items.slice(1)).flatMap((rest) => [rest, [items[0], ...rest]]);

export function* policies(): Generator<AuthPolicy> {
  for (const chosen of choices(FIRST_FACTORS))
    for (const firstFactors of chosen.length === 0 ? [] : orderings(chosen))
      for (const mfa of MFA_MODES) for (const passkeyEnrollment of PASSKEY_ENROLLMENT) yield { firstFactors, mfa, passkeyEnrollment, signUp: false };
}
