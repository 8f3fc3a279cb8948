/**
 * Passkeys and security keys, two kinds of one factor (./webauthn.ts): enrolled by a
 * registration, challenged and verified by an assertion, listed, renamed and removed.
 */
import type { Factor } from "../contract";
import { WEBAUTHN_EVIDENCE_RULES } from "./evidence";
import {
  listWebAuthnCredentials,
  registrationOptions,
  removeWebAuthnCredential,
  secondFactorOptions,
  verifyAssertion,
  verifyRegistration,
  webAuthnHolders,
  WEBAUTHN_LIMITS,
} from "./webauthn";

export { PASSKEY_EVIDENCE, SECURITY_KEY_EVIDENCE } from "./evidence";
export * from "./webauthn";

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
  verify: verifyAssertion,
  answer: null,
} as const satisfies Factor<"passkey" | "security_key">;
