/**
 * What the factors prove: each factor's rules (`<kind>/evidence.ts`), in the order of
 * ./registry.ts `FACTORS`, as plain data. lib/authn/evidence.ts derives everything it knows about
 * a factor's methods from this list. It is not read from the registry because the factors' own
 * modules import lib/authn/evidence.ts, and the registry imports them: not only for evidence
 * records and strengths (which a factor could build from its own rule), but because a factor's
 * guessing limits, made when its module loads, name the method itself and every stronger
 * local method (./limits.ts `knownAfter`, over `EVIDENCE_METHODS`: every factor's rules), and
 * ./limits.ts reads the hosted session, which reads evidence. ./registry.test.ts fails unless the
 * two lists hold the same rules in the same order.
 */
import { EMAIL_CODE_EVIDENCE_RULES } from "./email-code/evidence";
import { PASSWORD_EVIDENCE_RULES } from "./password/evidence";
import { RECOVERY_CODES_EVIDENCE_RULES } from "./recovery-codes/evidence";
import { TOTP_EVIDENCE_RULES } from "./totp/evidence";
import { WEBAUTHN_EVIDENCE_RULES } from "./webauthn/evidence";

export const FACTOR_EVIDENCE_RULES = [
  ...PASSWORD_EVIDENCE_RULES,
  ...EMAIL_CODE_EVIDENCE_RULES,
  ...WEBAUTHN_EVIDENCE_RULES,
  ...TOTP_EVIDENCE_RULES,
  ...RECOVERY_CODES_EVIDENCE_RULES,
] as const;
