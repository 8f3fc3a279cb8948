import type { EvidenceRule } from "../evidence-rule";

/** An authenticator app's code: possession of the app; a second factor only. */
export const TOTP_EVIDENCE = { method: "totp", amr: ["otp"], strength: "possession", categories: ["possession"], primary: false } as const satisfies EvidenceRule;
