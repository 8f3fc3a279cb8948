/**
 * Each kind of factor's parts of the hosted steps and the portal's verification, keyed by kind
 * (lib/authn/factors/registry.ts `FactorKind`: the type check fails until a new kind has its
 * entry). The second-factor and enrolment steps and the portal's panel render the kinds offered
 * through this map, each factor's part once.
 */
import type { FactorKind } from "@/lib/authn/factors/registry";
import { EMAIL_CODE_PARTS } from "./email-code";
import { PASSWORD_PARTS } from "./password";
import { RECOVERY_CODES_PARTS } from "./recovery-codes";
import { TOTP_PARTS } from "./totp";
import type { FactorParts } from "./types";
import { WEBAUTHN_PARTS } from "./webauthn";

export type { StepView } from "./types";

const FACTOR_PARTS: Readonly<Record<FactorKind, FactorParts>> = {
  password: PASSWORD_PARTS,
  email_otp: EMAIL_CODE_PARTS,
  passkey: WEBAUTHN_PARTS,
  security_key: WEBAUTHN_PARTS,
  totp: TOTP_PARTS,
  recovery_code: RECOVERY_CODES_PARTS,
};

/** The parts of the kinds offered, in the order offered, each factor's once (a passkey and a security key share one). */
export function partsOf(kinds: readonly FactorKind[]): FactorParts[] {
  return [...new Set(kinds.map((k) => FACTOR_PARTS[k]))];
}
