/**
 * Every declared limit of the service, where it is declared: what docs/security.md's table of
 * limits is rendered from (lib/limits/table.ts; `limits.test.ts` beside this file fails when the
 * page and the declarations disagree). Guessing limits are declared in the factor modules and
 * listed here; request limits are read from the route table, where each route declares its own.
 */
import { DEFAULT_RATE_LIMITS } from "../config";
import { EMAIL_CODE_GUESSING, EMAIL_CODE_SENDING } from "../authn/factors/email-otp";
import { PASSWORD_LIMITS } from "../authn/factors/password";
import { RECOVERY_CODE_LIMITS } from "../authn/factors/recovery-codes";
import { TOTP_LIMITS } from "../authn/factors/totp";
import { WEBAUTHN_LIMITS } from "../authn/factors/webauthn";
import type { GuessingLimits, RequestLimits } from "../limits/declarations";
import { renderGuessingTable, renderRequestTable, type Declared } from "../limits/table";
import { CLIENT_SECRET_LIMITS } from "../oauth/clients";
import { EVERY_ROUTE_LIMITS, routes } from "./router";

export const GUESSING_LIMITS: Declared<GuessingLimits>[] = [
  { limits: PASSWORD_LIMITS, declaredIn: "`lib/authn/factors/password.ts` (`PASSWORD_LIMITS`)" },
  { limits: EMAIL_CODE_GUESSING, declaredIn: "`lib/authn/factors/email-otp.ts` (`EMAIL_CODE_GUESSING`)" },
  { limits: EMAIL_CODE_SENDING, declaredIn: "`lib/authn/factors/email-otp.ts` (`EMAIL_CODE_SENDING`)" },
  { limits: TOTP_LIMITS, declaredIn: "`lib/authn/factors/totp.ts` (`TOTP_LIMITS`)" },
  { limits: RECOVERY_CODE_LIMITS, declaredIn: "`lib/authn/factors/recovery-codes.ts` (`RECOVERY_CODE_LIMITS`)" },
  { limits: WEBAUTHN_LIMITS, declaredIn: "`lib/authn/factors/webauthn.ts` (`WEBAUTHN_LIMITS`)" },
  { limits: CLIENT_SECRET_LIMITS, declaredIn: "`lib/oauth/clients.ts` (`CLIENT_SECRET_LIMITS`)" },
];

/** The request limits of the route table: every route's, then each one that routes declare, with those routes. */
export const REQUEST_LIMITS: Declared<RequestLimits>[] = (() => {
  const declaring = new Map<RequestLimits, string[]>();
  for (const route of routes) for (const limits of route.limits ?? []) declaring.set(limits, [...(declaring.get(limits) ?? []), `\`${route.method} ${route.path}\``]);
  return [
    ...EVERY_ROUTE_LIMITS.map((limits) => ({ limits, declaredIn: "the route table (`lib/server/router.ts`), for every route" })),
    ...[...declaring].map(([limits, paths]) => ({ limits, declaredIn: `beside the routes ${paths.join(", ")}` })),
  ];
})();

/** The two tables of docs/security.md's "Declared limits", at the default settings. */
export function limitsTables(): string {
  return `${renderGuessingTable(GUESSING_LIMITS, DEFAULT_RATE_LIMITS)}\n\n${renderRequestTable(REQUEST_LIMITS, DEFAULT_RATE_LIMITS)}`;
}
