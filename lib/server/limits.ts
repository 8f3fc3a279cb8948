/**
 * Every declared limit of the service, where it is declared: what docs/security.md's table of
 * limits is rendered from (lib/limits/table.ts; `limits.test.ts` beside this file fails when the
 * page and the declarations disagree). A new declaration is listed here.
 */
import { DEFAULT_RATE_LIMITS } from "../config";
import { EMAIL_CODE_GUESSING, EMAIL_CODE_SENDING } from "../authn/factors/email-code";
import { PASSWORD_LIMITS } from "../authn/factors/password";
import { RECOVERY_CODE_LIMITS } from "../authn/factors/recovery-codes";
import { TOTP_LIMITS } from "../authn/factors/totp";
import { WEBAUTHN_LIMITS } from "../authn/factors/webauthn";
import type { GuessingLimits, RequestLimits } from "../limits/declarations";
import { renderGuessingTable, renderRequestTable, type Declared } from "../limits/table";
import { CLIENT_REQUESTS, CLIENT_SECRET_LIMITS } from "../oauth/clients";
import { ADDRESS_REQUESTS } from "./router";

export const GUESSING_LIMITS: Declared<GuessingLimits>[] = [
  { limits: PASSWORD_LIMITS, declaredIn: "`lib/authn/factors/password/password.ts` (`PASSWORD_LIMITS`)" },
  { limits: EMAIL_CODE_GUESSING, declaredIn: "`lib/authn/factors/email-code/email-code.ts` (`EMAIL_CODE_GUESSING`)" },
  { limits: EMAIL_CODE_SENDING, declaredIn: "`lib/authn/factors/email-code/email-code.ts` (`EMAIL_CODE_SENDING`)" },
  { limits: TOTP_LIMITS, declaredIn: "`lib/authn/factors/totp/totp.ts` (`TOTP_LIMITS`)" },
  { limits: RECOVERY_CODE_LIMITS, declaredIn: "`lib/authn/factors/recovery-codes/recovery-codes.ts` (`RECOVERY_CODE_LIMITS`)" },
  { limits: WEBAUTHN_LIMITS, declaredIn: "`lib/authn/factors/webauthn/webauthn.ts` (`WEBAUTHN_LIMITS`)" },
  { limits: CLIENT_SECRET_LIMITS, declaredIn: "`lib/oauth/clients.ts` (`CLIENT_SECRET_LIMITS`)" },
];

export const REQUEST_LIMITS: Declared<RequestLimits>[] = [
  { limits: ADDRESS_REQUESTS, declaredIn: "`lib/server/router.ts` (`ADDRESS_REQUESTS`)" },
  { limits: CLIENT_REQUESTS, declaredIn: "`lib/oauth/clients.ts` (`CLIENT_REQUESTS`)" },
];

/** The two tables of docs/security.md's "Declared limits", at the default settings. */
export function limitsTables(): string {
  return `${renderGuessingTable(GUESSING_LIMITS, DEFAULT_RATE_LIMITS)}\n\n${renderRequestTable(REQUEST_LIMITS, DEFAULT_RATE_LIMITS)}`;
}
