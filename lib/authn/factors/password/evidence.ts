import type { EvidenceRule } from "../evidence-rule";

/** The account's password: something the user knows; it identifies the user. */
export const PASSWORD_EVIDENCE = { method: "password", amr: ["pwd"], strength: "knowledge", categories: ["knowledge"], primary: true } as const satisfies EvidenceRule;
