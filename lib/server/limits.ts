/**
 * Every declared limit of the service, where it is declared: what docs/security.md's table of
 * limits is rendered from (lib/limits/table.ts; `limits.test.ts` beside this file fails when the
 * page and the declarations disagree). A new declaration is listed here; a factor's come from its
 * descriptor.
 */
import { DEFAULT_RATE_LIMITS } from "../config";
import { FACTORS } from "../authn/factors/registry";
import type { GuessingLimits, RequestLimits } from "../limits/declarations";
import { renderGuessingTable, renderRequestTable, type Declared } from "../limits/table";
import { CLIENT_REQUESTS, CLIENT_SECRET_LIMITS } from "../oauth/clients";
import { ADDRESS_REQUESTS } from "./router";

export const GUESSING_LIMITS: Declared<GuessingLimits>[] = [
  // Each factor's, as its descriptor declares them (lib/authn/factors/registry.ts).
  ...FACTORS.flatMap((f) => f.limits.map((limits) => ({ limits, declaredIn: `\`lib/authn/factors/${f.folder}/\`` }))),
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
