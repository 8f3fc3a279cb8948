/**
 * The email one-time code as a factor (./email-code.ts): challenge (a code sent to the address)
 * and verify; nothing to enrol or list (the account's own address).
 */
import type { Factor } from "../contract";
import { EMAIL_CODE_GUESSING, EMAIL_CODE_SENDING, issueEmailCode, verifyEmailCodeFactor } from "./email-code";
import { EMAIL_CODE_EVIDENCE_RULES } from "./evidence";

export { EMAIL_CODE_EVIDENCE } from "./evidence";
export * from "./email-code";

export const EMAIL_CODE_FACTOR = {
  folder: "email-code",
  evidence: EMAIL_CODE_EVIDENCE_RULES,
  roles: { email_otp: { further: null, portalPrimary: "first_factor" } },
  labels: { email_otp: "Email code" },
  limits: [EMAIL_CODE_GUESSING, EMAIL_CODE_SENDING],
  events: [],
  errors: ["invalid_code", "code_expired", "code_resend_wait", "rate_limited", "email_unavailable", "invalid_email"],
  metricLabels: { email_otp: "email_code" },
  failedSignIn: null,
  shownOnce: null,
  enrollable: [],
  held: null,
  enrol: null,
  challenge: issueEmailCode,
  verify: verifyEmailCodeFactor,
  answer: null,
} as const satisfies Factor<"email_otp">;
