import type { EvidenceRule } from "../evidence-rule";

/** A printed recovery code: possession, standing in for a lost second factor; a second factor only. */
export const RECOVERY_CODE_EVIDENCE = { method: "recovery_code", amr: ["otp"], strength: "possession", categories: ["possession"], primary: false } as const satisfies EvidenceRule;

/** The factor's evidence, one rule per kind it yields: its descriptor's `evidence` (./index.ts) and its entry in ../evidence-rules.ts. */
export const RECOVERY_CODES_EVIDENCE_RULES = [RECOVERY_CODE_EVIDENCE] as const;
