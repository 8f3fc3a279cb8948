import type { EvidenceRule } from "../evidence-rule";

/** A code sent to the account's address: possession of the inbox; it identifies the user. */
export const EMAIL_CODE_EVIDENCE = { method: "email_otp", amr: ["otp"], strength: "possession", categories: ["possession"], primary: true } as const satisfies EvidenceRule;

/** The factor's evidence, one rule per kind it yields: its descriptor's `evidence` (./index.ts) and its entry in ../evidence-rules.ts. */
export const EMAIL_CODE_EVIDENCE_RULES = [EMAIL_CODE_EVIDENCE] as const;
