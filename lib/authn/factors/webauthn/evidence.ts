import type { EvidenceRule } from "../evidence-rule";

/**
 * A passkey: a discoverable credential that verified the user (a PIN or a biometric), so two
 * categories and phishing-resistant; it identifies the user.
 */
export const PASSKEY_EVIDENCE = {
  method: "passkey",
  amr: ["hwk", "user"],
  strength: "phishing_resistant",
  categories: ["possession", "user_verification"],
  primary: true,
} as const satisfies EvidenceRule;

/** A security key: user presence only, so possession; phishing-resistant; a second factor only. */
export const SECURITY_KEY_EVIDENCE = { method: "security_key", amr: ["hwk"], strength: "phishing_resistant", categories: ["possession"], primary: false } as const satisfies EvidenceRule;

/** The factor's evidence, one rule per kind it yields: its descriptor's `evidence` (./index.ts) and its entry in ../evidence-rules.ts. */
export const WEBAUTHN_EVIDENCE_RULES = [PASSKEY_EVIDENCE, SECURITY_KEY_EVIDENCE] as const;
