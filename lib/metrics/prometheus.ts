/**
 * The domain metrics over prom-client, registered when the server collects metrics (METRICS_PORT,
 * ./listener.ts). With WEB_CONCURRENCY workers each worker registers its own and the first
 * process answers with their sum (prom-client's AggregatorRegistry): counters and histograms add
 * up per label set, and the pool gauge is summed too (`aggregator: "sum"`), so `max` is the
 * connections of every worker's pool together.
 */
import { Counter, Gauge, Histogram, register, type Registry } from "prom-client";
import { observe } from "../signals";
import { databasePools } from "../signals/database";
import { holder, SIGN_IN_OUTCOMES, type DomainRecorder, type PoolState, type SignInMethod } from "./index";

/** Seconds: a statement on the hot path takes well under a millisecond to a few; a lock wait or an outage, up to the connect timeout. */
export const DATABASE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * The metrics, registered in `registry`; `signInMethods` is the closed list of the sign-in's
 * methods (lib/sign-in/outcomes.ts `SIGN_IN_METHODS`); the pool gauge reads `pools` at each scrape.
 */
export function domainRecorder(registry: Registry, signInMethods: readonly SignInMethod[], pools: ReadonlySet<PoolState> = databasePools()): DomainRecorder {
  const registers = [registry];
  const tokens = new Counter({
    name: "latchkey_tokens_issued_total",
    help: "Token responses of the token endpoint, by grant type",
    labelNames: ["grant"],
    registers,
  });
  const signIns = new Counter({
    name: "latchkey_sign_ins_total",
    help: "Factors a hosted sign-in step verified (success) or refused (failure), by method",
    labelNames: ["method", "outcome"],
    registers,
  });
  const refusals = new Counter({
    name: "latchkey_rate_limit_refusals_total",
    help: "Attempts and requests refused by a declared limit, by the limit's name",
    labelNames: ["policy"],
    registers,
  });
  const reuse = new Counter({
    name: "latchkey_refresh_reuse_detections_total",
    help: "Superseded refresh tokens presented again by their client: each revoked its family",
    registers,
  });
  const dependency = new Counter({
    name: "latchkey_dependency_failures_total",
    help: "Answers of 503 because the database could not confirm authority, by the route's error family",
    labelNames: ["family"],
    registers,
  });
  const durations = new Histogram({
    name: "latchkey_db_query_duration_seconds",
    help: "Database statements, and transactions from BEGIN to COMMIT or ROLLBACK, by kind",
    labelNames: ["kind"],
    buckets: DATABASE_BUCKETS,
    registers,
  });
  new Gauge({
    name: "latchkey_db_pool_connections",
    help: "Database connections: the pool's size (max), held by a statement or transaction (in_use), free (idle), and statements waiting beyond the pool (waiting)",
    labelNames: ["state"],
    registers,
    aggregator: "sum",
    collect() {
      let max = 0;
      let held = 0;
      for (const pool of pools) {
        max += pool.max;
        held += pool.inUse;
      }
      const inUse = Math.min(held, max);
      this.set({ state: "max" }, max);
      this.set({ state: "in_use" }, inUse);
      this.set({ state: "idle" }, max - inUse);
      this.set({ state: "waiting" }, held - inUse);
    },
  });

  // Every series of a closed list starts at 0, so a rate sees its first event.
  for (const method of signInMethods) for (const outcome of SIGN_IN_OUTCOMES) signIns.labels(method, outcome).inc(0);
  const statement = durations.labels("statement");
  const transaction = durations.labels("transaction");
  durations.zero({ kind: "statement" });
  durations.zero({ kind: "transaction" });

  return {
    tokenIssued: (grant) => tokens.inc({ grant }),
    signIn: (method, outcome) => signIns.inc({ method, outcome }),
    rateLimitRefusal: (policy) => refusals.inc({ policy }),
    refreshReuse: () => reuse.inc(),
    dependencyFailure: (family) => dependency.inc({ family }),
    databaseTiming: (kind, seconds) => (kind === "statement" ? statement : transaction).observe(seconds),
  };
}

/**
 * Feeds `recorder` from the domain signals (lib/signals), each once where its rule decides it;
 * returns what stops it.
 */
export function observeSignals(recorder: DomainRecorder): () => void {
  const stops = [
    observe("token_issued", (s) => recorder.tokenIssued(s.grantType)),
    observe("sign_in_factor", (s) => recorder.signIn(s.method, s.outcome)),
    observe("rate_limit_refused", (s) => recorder.rateLimitRefusal(s.limit)),
    observe("refresh_reuse_detected", () => recorder.refreshReuse()),
    observe("dependency_failed", (s) => recorder.dependencyFailure(s.family)),
    observe("database_timed", (s) => recorder.databaseTiming(s.kind, s.seconds)),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}

/**
 * Starts recording the domain metrics into prom-client's default registry (once per process), with
 * the closed list of the sign-in's methods (lib/sign-in/outcomes.ts `SIGN_IN_METHODS`): from now
 * on they observe the domain signals.
 */
export function enableDomainMetrics(signInMethods: readonly SignInMethod[]): void {
  if (holder.recorder) return;
  holder.recorder = domainRecorder(register, signInMethods);
  observeSignals(holder.recorder);
}
