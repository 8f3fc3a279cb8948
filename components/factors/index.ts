/**
 * Each kind of factor's parts of the hosted steps and the portal's verification, keyed by kind
 * (lib/authn/factors/registry.ts `FactorKind`). A kind answered otherwise than by a typed code has
 * its entry here (the type check fails until a new one has); a kind answered by a typed code is
 * shown with the parts drawn from its answer (./typed-code.tsx) unless it has an entry here (an
 * authenticator app adds its enrolment, recovery codes are folded away under the second factors).
 * The second-factor and enrolment steps and the portal's panel render the kinds offered through
 * `partsOf`, each factor's part once.
 */
import { TYPED_CODE_FACTORS, type FactorKind, type TypedCodeKind } from "@/lib/authn/factors/registry";
import { EMAIL_CODE_PARTS } from "./email-code";
import { PASSWORD_PARTS } from "./password";
import { RECOVERY_CODES_PARTS } from "./recovery-codes";
import { TOTP_PARTS } from "./totp";
import { typedCodeParts } from "./typed-code";
import type { FactorParts } from "./types";
import { WEBAUTHN_PARTS } from "./webauthn";

export type { StepView } from "./types";

type OwnParts = Readonly<Record<Exclude<FactorKind, TypedCodeKind>, FactorParts> & Partial<Record<TypedCodeKind, FactorParts>>>;

const FACTOR_PARTS: OwnParts = {
  password: PASSWORD_PARTS,
  email_otp: EMAIL_CODE_PARTS,
  passkey: WEBAUTHN_PARTS,
  security_key: WEBAUTHN_PARTS,
  totp: TOTP_PARTS,
  recovery_code: RECOVERY_CODES_PARTS,
};

/** Every kind's parts: its own, or those drawn from its typed-code answer (one object per factor). */
const PARTS: ReadonlyMap<FactorKind, FactorParts> = new Map<FactorKind, FactorParts>([
  ...TYPED_CODE_FACTORS.map((f): [FactorKind, FactorParts] => [f.answer.kind, typedCodeParts(f.answer)]),
  ...Object.entries(FACTOR_PARTS).map(([kind, parts]): [FactorKind, FactorParts] => [kind as FactorKind, parts]),
]);

export function partsOf(kinds: readonly FactorKind[]): FactorParts[] {
  return [
    ...new Set(
      kinds.map((k) => {
        const parts = PARTS.get(k);
        if (!parts) throw new Error(`no parts for ${k}`);
        return parts;
      }),
    ),
  ];
}
