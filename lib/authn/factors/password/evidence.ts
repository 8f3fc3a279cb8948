import type { EvidenceRule } from "../evidence-rule";

/** The account's password: something the user knows; it identifies the user. */
export const PASSWORD_EVIDENCE = { method: "password", amr: ["pwd"], strength: "knowledge", categories: ["knowledge"], primary: true } as const satisfies EvidenceRule;

/** The factor's evidence, one rule per kind it yields: its descriptor's `evidence` (./index.ts) and its entry in ../evidence-rules.ts. */
export const PASSWORD_EVIDENCE_RULES = [PASSWORD_EVIDENCE] as const;
