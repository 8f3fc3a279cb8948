/**
 * Authenticator apps as a factor (./totp.ts): enrolled (a seed, confirmed by a first code),
 * verified by a code, listed and removed; no challenge (the app shows the code).
 */
import type { Factor } from "../contract";
import { TOTP_EVIDENCE_RULES } from "./evidence";
import { confirmTotpEnrolment, listTotpFactors, totpHolders, removeTotpFactor, startTotpEnrolment, TOTP_LIMITS, verifyTotp } from "./totp";

export { TOTP_EVIDENCE } from "./evidence";
export * from "./totp";

export const TOTP_FACTOR = {
  folder: "totp",
  evidence: TOTP_EVIDENCE_RULES,
  roles: { totp: { further: "enrolled", portalPrimary: null } },
  labels: { totp: "Authenticator app" },
  limits: [TOTP_LIMITS],
  events: ["account_security.credential_added"],
  errors: ["invalid_code", "enrollment_failed"],
  failedSignIn: "totp",
  enrollable: ["totp"],
  held: { list: listTotpFactors, holders: totpHolders, remove: removeTotpFactor },
  enrol: { start: startTotpEnrolment, complete: confirmTotpEnrolment },
  challenge: null,
  verify: verifyTotp,
  answer: {
    by: "typed_code",
    kind: "totp",
    signInPath: "/sign-in/totp",
    portalPath: "/account/verify/totp",
    gate: TOTP_LIMITS,
    check: verifyTotp,
    wrong: "invalid_code",
  },
} as const satisfies Factor<"totp">;
