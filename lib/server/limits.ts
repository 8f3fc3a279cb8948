/**
 * Every declared limit of the service, where it is declared: what docs/security.md's table of
 * limits is rendered from (lib/limits/table.ts; `limits.test.ts` beside this file fails when the
 * page and the declarations disagree). Guessing limits come from each factor's descriptor
 * (lib/authn/factors/registry.ts), each feature's (lib/features/registry.ts) and the client-secret
 * declaration; request limits are read from the route table, where each route declares its own.
 */
import { DEFAULT_RATE_LIMITS } from "../config";
import { FACTORS, signInLabelsOf } from "../authn/factors/registry";
import type { GuessingLimits, RequestLimits } from "../limits/declarations";
import { renderGuessingTable, renderRequestTable, type Declared } from "../limits/table";
import { CLIENT_SECRET_LIMITS } from "../oauth/clients";
import { USER_CODE_LIMITS } from "../oauth/device-authorization/limits";
import { FEATURES } from "../features/registry";
import type { Feature } from "../surfaces/feature";
import { EVERY_ROUTE_LIMITS, routes } from "./router";

export const GUESSING_LIMITS: Declared<GuessingLimits>[] = [
  // Each factor's, as its descriptor declares them (lib/authn/factors/registry.ts), its sign-in labels on its first row.
  ...FACTORS.flatMap((f) => f.limits.map((limits, i) => ({ limits, declaredIn: `\`lib/authn/factors/${f.folder}/\``, signIns: i === 0 ? signInLabelsOf(f) : [] }))),
  { limits: CLIENT_SECRET_LIMITS, declaredIn: "`lib/oauth/clients.ts` (`CLIENT_SECRET_LIMITS`)" },
  { limits: USER_CODE_LIMITS, declaredIn: "`lib/oauth/device-authorization/limits.ts` (`USER_CODE_LIMITS`)" },
  // Each feature's, as its descriptor declares them (lib/features/registry.ts).
  ...FEATURES.flatMap((f: Feature) => (f.guessingLimits ?? []).map((limits) => ({ limits, declaredIn: `the feature \`${f.name}\`` }))),
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
