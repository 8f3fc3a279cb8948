/**
 * Recovery codes as a factor (./recovery-codes.ts): a set generated with the first second factor
 * (or anew in the portal), each code verified once; the set is listed and removed as one.
 */
import type { EndpointContext } from "../../../http/context";
import type { Factor, TypedCodeAnswer } from "../contract";
import { verifyTypedCode } from "../typed-code";
import { RECOVERY_CODES_EVIDENCE_RULES } from "./evidence";
import { generateRecoveryCodes, listRecoveryCodes, recoveryCodeHolders, RECOVERY_CODE_LIMITS, removeRecoveryCodes, useRecoveryCode } from "./recovery-codes";

export { RECOVERY_CODE_EVIDENCE } from "./evidence";
export * from "./recovery-codes";

/** Answered by a code the user types: the sign-in's step and the portal's verification are built from it. */
const RECOVERY_CODES_ANSWER = {
  by: "typed_code",
  kind: "recovery_code",
  signInPath: "/sign-in/recovery-code",
  portalPath: "/account/verify/recovery-code",
  gate: RECOVERY_CODE_LIMITS,
  check: useRecoveryCode,
  wrong: "invalid_recovery_code",
  label: { en: "Recovery code", de: "Wiederherstellungscode", fr: "Code de récupération" },
} as const satisfies TypedCodeAnswer<"recovery_code">;

export const RECOVERY_CODES_FACTOR = {
  folder: "recovery-codes",
  evidence: RECOVERY_CODES_EVIDENCE_RULES,
  roles: { recovery_code: { further: "backup", portalPrimary: null } },
  labels: { recovery_code: "Recovery codes" },
  limits: [RECOVERY_CODE_LIMITS],
  events: ["account_security.recovery_codes_generated", "recovery_code.used"],
  errors: ["invalid_recovery_code"],
  metricLabels: { recovery_code: "recovery_code" },
  failedSignIn: "recovery_code",
  shownOnce: "recovery_codes",
  enrollable: [],
  held: { list: listRecoveryCodes, holders: recoveryCodeHolders, remove: removeRecoveryCodes },
  enrol: { start: null, complete: generateRecoveryCodes },
  challenge: null,
  verify: (ctx: EndpointContext, request: Request, userId: string, code: string) => verifyTypedCode(ctx, request, RECOVERY_CODES_ANSWER, userId, code),
  answer: RECOVERY_CODES_ANSWER,
} as const satisfies Factor<"recovery_code">;
