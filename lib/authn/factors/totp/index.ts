/**
 * Authenticator apps as a factor (./totp.ts): enrolled (a seed, confirmed by a first code),
 * verified by a code, listed and removed; no challenge (the app shows the code).
 */
import type { EndpointContext } from "../../../http/context";
import type { Factor, TypedCodeAnswer } from "../contract";
import { verifyTypedCode } from "../typed-code";
import { TOTP_EVIDENCE_RULES } from "./evidence";
import { confirmTotpEnrolment, listTotpFactors, totpHolders, removeTotpFactor, startTotpEnrolment, TOTP_LIMITS, verifyTotp } from "./totp";

export { TOTP_EVIDENCE } from "./evidence";
export * from "./totp";

/** Answered by a code the user types: the sign-in's step and the portal's verification are built from it. */
const TOTP_ANSWER = {
  by: "typed_code",
  kind: "totp",
  signInPath: "/sign-in/totp",
  portalPath: "/account/verify/totp",
  gate: TOTP_LIMITS,
  check: verifyTotp,
  wrong: "invalid_code",
  label: { en: "Code from your authenticator app", de: "Code aus Ihrer Authenticator-App", fr: "Code de votre application d’authentification" },
} as const satisfies TypedCodeAnswer<"totp">;

export const TOTP_FACTOR = {
  folder: "totp",
  evidence: TOTP_EVIDENCE_RULES,
  roles: { totp: { further: "enrolled", portalPrimary: null } },
  labels: { totp: "Authenticator app" },
  limits: [TOTP_LIMITS],
  events: ["account_security.credential_added"],
  errors: ["invalid_code", "enrollment_failed"],
  metricLabels: { totp: "totp" },
  failedSignIn: "totp",
  shownOnce: null,
  enrollable: ["totp"],
  held: { list: listTotpFactors, holders: totpHolders, remove: removeTotpFactor },
  enrol: { start: startTotpEnrolment, complete: confirmTotpEnrolment },
  challenge: null,
  verify: (ctx: EndpointContext, request: Request, userId: string, code: string) => verifyTypedCode(ctx, request, TOTP_ANSWER, userId, code),
  answer: TOTP_ANSWER,
} as const satisfies Factor<"totp">;
