/**
 * Passkeys and security keys, two kinds of one factor (./webauthn.ts): enrolled by a
 * registration, challenged and verified by an assertion (one verification, ./verify.ts, which
 * every flow calls: the assertion's own check is not exported from here), listed, renamed and
 * removed.
 */
import type { Factor } from "../contract";
import { WEBAUTHN_EVIDENCE_RULES } from "./evidence";
import {
  listWebAuthnCredentials,
  registrationOptions,
  removeWebAuthnCredential,
  secondFactorOptions,
  verifyRegistration,
  webAuthnHolders,
  WEBAUTHN_LIMITS,
} from "./webauthn";
import { verifyWebAuthnFactor } from "./verify";

export { PASSKEY_EVIDENCE, SECURITY_KEY_EVIDENCE } from "./evidence";
export {
  listWebAuthnCredentials,
  passkeySignInOptions,
  registrationOptions,
  registrationUser,
  relyingParty,
  removeWebAuthnCredential,
  secondFactorOptions,
  verifyRegistration,
  webAuthnHolders,
  WEBAUTHN_ALGORITHMS,
  WEBAUTHN_CHALLENGE_TTL_MS,
  WEBAUTHN_LIMITS,
  type AssertionExpectation,
  type RegistrationResult,
  type RegistrationUser,
  type RelyingParty,
  type WebAuthnKind,
} from "./webauthn";
export { verifyWebAuthnFactor, type WebAuthnVerification } from "./verify";

export const WEBAUTHN_FACTOR = {
  folder: "webauthn",
  evidence: WEBAUTHN_EVIDENCE_RULES,
  // A passkey identifies the user and is a second factor too; a security key is only the latter.
  roles: { passkey: { further: "enrolled", portalPrimary: "held" }, security_key: { further: "enrolled", portalPrimary: null } },
  labels: { passkey: "Passkey", security_key: "Security key" },
  limits: [WEBAUTHN_LIMITS],
  events: ["account_security.credential_added"],
  errors: ["webauthn_failed", "webauthn_limited", "credential_refused", "enrollment_failed", "passkey_required"],
  metricLabels: { passkey: "passkey", security_key: "security_key" },
  failedSignIn: "webauthn",
  shownOnce: null,
  // Offered in this order after an authenticator app.
  enrollable: ["security_key", "passkey"],
  held: { list: listWebAuthnCredentials, holders: webAuthnHolders, remove: removeWebAuthnCredential },
  enrol: { start: registrationOptions, complete: verifyRegistration },
  challenge: secondFactorOptions,
  verify: verifyWebAuthnFactor,
  answer: null,
} as const satisfies Factor<"passkey" | "security_key">;
