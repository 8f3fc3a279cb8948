/**
 * Domain metrics: what the service counts for Prometheus besides the process (docs/configuration.md,
 * "Domain metrics"). They observe the domain signals (lib/signals): tokens issued, sign-in
 * outcomes, limit refusals, refresh-token reuse, 503s, database timings, each signalled once where
 * its rule is decided. No rule names the metrics: `enableDomainMetrics` (./prometheus.ts), which
 * the server runs only when METRICS_PORT is set, subscribes to the signals; until then nothing
 * observes them and each signal is one array-length check where it is emitted.
 *
 * Labels are bounded: every value comes from code (a grant type of the registry, a limit's declared
 * name, an error family, the closed lists of the sign-in's methods and outcomes), never from a
 * request: no client, user or workspace id, email, address or path, though a signal's payload may
 * carry them for other observers.
 */
import type { DatabaseTiming, SignInMethod, SignInOutcome } from "../signals";

/**
 * How a sign-in factor is named in `latchkey_sign_ins_total{method}`: a closed list declared above
 * this layer (each factor's descriptor names its labels; lib/sign-in/outcomes.ts `SIGN_IN_METHODS`
 * lists them with the federated ones), given to the recorder when it is enabled
 * (./prometheus.ts `enableDomainMetrics`), so that every series of it starts at 0.
 */
export { SIGN_IN_OUTCOMES, type DatabaseTiming, type SignInMethod, type SignInOutcome } from "../signals";
/** A database pool as the pool gauge reads it (lib/signals/database.ts: its size and the connections held now). */
export type { DatabasePool as PoolState } from "../signals/database";

/** Where the metrics go once enabled (./prometheus.ts builds it over prom-client). */
export interface DomainRecorder {
  tokenIssued(grant: string): void;
  signIn(method: SignInMethod, outcome: SignInOutcome): void;
  rateLimitRefusal(policy: string): void;
  refreshReuse(): void;
  dependencyFailure(family: string): void;
  databaseTiming(kind: DatabaseTiming, seconds: number): void;
}

/** Where the HTTP requests go once enabled (./http.ts builds it over prom-client). */
export interface HttpRecorder {
  /** One answer: its status, or `aborted` when the client went away before it was sent in full. */
  record(family: string, method: string, status: number | "aborted", seconds: number): void;
}

interface Holder {
  /** The domain metrics' recorder, once enabled (once per process, whichever copy of this module enables it). */
  recorder: DomainRecorder | null;
}

const KEY = Symbol.for("latchkey.metrics");
const scope = globalThis as Record<symbol, unknown>;
/** Shared by every copy of this module in the process. */
export const holder: Holder = (scope[KEY] as Holder | undefined) ?? (scope[KEY] = { recorder: null } satisfies Holder);
