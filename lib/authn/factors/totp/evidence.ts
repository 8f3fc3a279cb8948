import type { EvidenceRule } from "../evidence-rule";

/** An authenticator app's code: possession of the app; a second factor only. */
export const TOTP_EVIDENCE = { method: "totp", amr: ["otp"], strength: "possession", categories: ["possession"], primary: false } as const satisfies EvidenceRule;

/** The factor's evidence, one rule per kind it yields: its descriptor's `evidence` (./index.ts) and its entry in ../evidence-rules.ts. */
export const TOTP_EVIDENCE_RULES = [TOTP_EVIDENCE] as const;
