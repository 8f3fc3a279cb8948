/**
 * Domain metrics: what the service counts for Prometheus besides the process (docs/configuration.md,
 * "Domain metrics"). Each rule records where it is decided, once: tokens where the token endpoint
 * answers with them, sign-in outcomes where the sign-in records a factor it verified or refused,
 * limit refusals in the one limiter of declarations, refresh-token reuse where it ends the family,
 * 503s in the one failure mapping, database timings in the database client's wrapper.
 *
 * Recording is a no-op until `enableDomainMetrics` (./prometheus.ts) runs, which the server does
 * only when METRICS_PORT is set: each function below is then one property read. This module loads
 * nothing (no prom-client): the recorder lives on `globalThis`, so the copy of this module in
 * Next's bundles (hosted pages, server actions) records into the same metrics as the custom
 * server's copy, which the metrics listener serves.
 *
 * Labels are bounded: every value comes from code (a grant type of the registry, a limit's declared
 * name, an error family, the closed lists of the sign-in's methods and outcomes), never from a request: no client, user or
 * workspace id, email, address or path.
 */

/**
 * How a sign-in factor is named in `latchkey_sign_ins_total{method}`: a closed list declared above
 * this layer (each factor's descriptor names its labels; lib/sign-in/outcomes.ts `SIGN_IN_METHODS`
 * lists them with the federated ones), given to the recorder when it is enabled
 * (./prometheus.ts `enableDomainMetrics`), so that every series of it starts at 0.
 */
export type SignInMethod = string;

export const SIGN_IN_OUTCOMES = ["success", "failure"] as const;
export type SignInOutcome = (typeof SIGN_IN_OUTCOMES)[number];

/** What a database timing measures: one statement, or one transaction from its BEGIN to its end. */
export type DatabaseTiming = "statement" | "transaction";

/** Where the metrics go once enabled (./prometheus.ts builds it over prom-client). */
export interface DomainRecorder {
  tokenIssued(grant: string): void;
  signIn(method: SignInMethod, outcome: SignInOutcome): void;
  rateLimitRefusal(policy: string): void;
  refreshReuse(): void;
  dependencyFailure(family: string): void;
  databaseTiming(kind: DatabaseTiming, seconds: number): void;
}

/** A database pool as the pool gauge reads it: its size and the connections held now. */
export interface PoolState {
  max: number;
  inUse: number;
}

/** Where the HTTP requests go once enabled (./http.ts builds it over prom-client). */
export interface HttpRecorder {
  /** One answer: its status, or `aborted` when the client went away before it was sent in full. */
  record(family: string, method: string, status: number | "aborted", seconds: number): void;
}

interface Holder {
  recorder: DomainRecorder | null;
  /** The HTTP requests' metrics (./http.ts), null until the server enables them. */
  http: HttpRecorder | null;
  /** The open pools that record (./database.ts), read by `latchkey_db_pool_connections` at each scrape. */
  pools: Set<PoolState>;
}

const KEY = Symbol.for("latchkey.metrics");
const scope = globalThis as Record<symbol, unknown>;
/** Shared by every copy of this module in the process (see the top of the file). */
export const holder: Holder = (scope[KEY] as Holder | undefined) ?? (scope[KEY] = { recorder: null, http: null, pools: new Set() } satisfies Holder);

/** A token response the token endpoint answered, by its grant type (`GRANTS`, lib/oauth/grants). */
export function countTokenIssued(grant: string): void {
  holder.recorder?.tokenIssued(grant);
}

/** A factor a sign-in step verified (`success`) or refused (`failure`). */
export function countSignIn(method: SignInMethod, outcome: SignInOutcome): void {
  holder.recorder?.signIn(method, outcome);
}

/** An attempt or request refused by a declared limit, by the declaration's name (lib/limits/declarations.ts). */
export function countRateLimitRefusal(policy: string): void {
  holder.recorder?.rateLimitRefusal(policy);
}

/** A superseded refresh token presented again, which revoked its family. */
export function countRefreshReuse(): void {
  holder.recorder?.refreshReuse();
}

/** A 503 because a dependency (the database) could not confirm authority, by the route's error family. */
export function countDependencyFailure(family: string): void {
  holder.recorder?.dependencyFailure(family);
}

/**
 * One answer of the production listener (lib/server/request-log.ts, once it is done), by its
 * request family, method and status (`aborted`: the client went away first), and its duration.
 */
export function countHttpRequest(family: string, method: string, status: number | "aborted", seconds: number): void {
  holder.http?.record(family, method, status, seconds);
}
