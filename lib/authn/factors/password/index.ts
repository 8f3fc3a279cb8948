/**
 * The account's password as a factor: no challenge (the user types the secret), verified by
 * argon2id (lib/authn/password.ts) under PASSWORD_LIMITS in one verification that owns its gate,
 * its account checks and its failure record (./verify.ts), for the sign-in and the portal alike;
 * nothing to enrol or list (the account's own, set at sign-up or by an administrator).
 */
import type { Factor } from "../contract";
import { PASSWORD_EVIDENCE_RULES } from "./evidence";
import { PASSWORD_LIMITS } from "./password";
import { verifyPasswordFactor } from "./verify";

export { PASSWORD_EVIDENCE } from "./evidence";
export * from "./password";
export { verifyPasswordFactor, type PasswordAccount, type PasswordRefusal, type PasswordVerification } from "./verify";

export const PASSWORD_FACTOR = {
  folder: "password",
  evidence: PASSWORD_EVIDENCE_RULES,
  roles: { password: { further: "first_factor", portalPrimary: "first_factor" } },
  labels: { password: "Password" },
  limits: [PASSWORD_LIMITS],
  events: [],
  errors: ["invalid_credentials", "rate_limited"],
  metricLabels: { password: "password" },
  failedSignIn: "password",
  shownOnce: null,
  enrollable: [],
  held: null,
  enrol: null,
  challenge: null,
  verify: verifyPasswordFactor,
  answer: null,
} as const satisfies Factor<"password">;
