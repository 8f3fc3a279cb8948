import { AggregatorRegistry, Registry, type MetricObjectWithValues, type MetricValue } from "prom-client";
import { describe, expect, it } from "vitest";
import { SIGN_IN_METHODS } from "../sign-in/outcomes";
import { SIGN_IN_OUTCOMES, type PoolState } from "./index";
import { DATABASE_BUCKETS, domainRecorder } from "./prometheus";

type Metrics = MetricObjectWithValues<MetricValue<string>>[];
const metric = (metrics: Metrics, name: string) => metrics.find((m) => m.name === name)!;
/** The value of the sample of `name` with `labels` (and, for a histogram, of its series `series`: `_bucket`, `_sum`, `_count`). */
function sample(metrics: Metrics, name: string, labels: Record<string, string | number>, series?: string): number | undefined {
  return metric(metrics, name).values.find(
    (v) => (series === undefined || (v as { metricName?: string }).metricName === `${name}${series}`) && Object.entries(labels).every(([k, x]) => v.labels[k] === x),
  )?.value;
}

/** One worker of a cluster: its own registry and pool. */
function worker(pool: PoolState) {
  const registry = new Registry();
  return { registry, recorder: domainRecorder(registry, SIGN_IN_METHODS, new Set([pool])) };
}

describe("the domain metrics of a cluster", () => {
  it("add up across workers as the first process answers them (AggregatorRegistry): counters, the histogram's buckets, the pool gauge", async () => {
    const one = worker({ max: 10, inUse: 3 });
    const two = worker({ max: 10, inUse: 12 });
    one.recorder.tokenIssued("refresh_token");
    two.recorder.tokenIssued("refresh_token");
    two.recorder.tokenIssued("authorization_code");
    one.recorder.signIn("password", "failure");
    two.recorder.signIn("password", "failure");
    one.recorder.rateLimitRefusal("ip");
    two.recorder.refreshReuse();
    one.recorder.dependencyFailure("oauth");
    one.recorder.databaseTiming("statement", 0.002);
    two.recorder.databaseTiming("statement", 0.2);
    two.recorder.databaseTiming("transaction", 0.01);

    const summed = (await AggregatorRegistry.aggregate([await one.registry.getMetricsAsJSON(), await two.registry.getMetricsAsJSON()]).getMetricsAsJSON()) as Metrics;
    expect(sample(summed, "latchkey_tokens_issued_total", { grant: "refresh_token" })).toBe(2);
    expect(sample(summed, "latchkey_tokens_issued_total", { grant: "authorization_code" })).toBe(1);
    expect(sample(summed, "latchkey_sign_ins_total", { method: "password", outcome: "failure" })).toBe(2);
    expect(sample(summed, "latchkey_sign_ins_total", { method: "totp", outcome: "success" })).toBe(0);
    expect(sample(summed, "latchkey_rate_limit_refusals_total", { policy: "ip" })).toBe(1);
    expect(sample(summed, "latchkey_refresh_reuse_detections_total", {})).toBe(1);
    expect(sample(summed, "latchkey_dependency_failures_total", { family: "oauth" })).toBe(1);
    const histogram = "latchkey_db_query_duration_seconds";
    expect(sample(summed, histogram, { kind: "statement" }, "_count")).toBe(2);
    expect(sample(summed, histogram, { kind: "statement" }, "_sum")).toBeCloseTo(0.202);
    expect(sample(summed, histogram, { kind: "statement", le: 0.0025 }, "_bucket")).toBe(1);
    expect(sample(summed, histogram, { kind: "statement", le: 0.25 }, "_bucket")).toBe(2);
    expect(sample(summed, histogram, { kind: "transaction" }, "_count")).toBe(1);
    // Two pools of 10: 3 held in one; the other's 12 statements fill it, 2 of them waiting.
    const pool = "latchkey_db_pool_connections";
    expect(metric(summed, pool).aggregator).toBe("sum");
    expect(sample(summed, pool, { state: "max" })).toBe(20);
    expect(sample(summed, pool, { state: "in_use" })).toBe(13);
    expect(sample(summed, pool, { state: "idle" })).toBe(7);
    expect(sample(summed, pool, { state: "waiting" })).toBe(2);
  });

  it("start every sign-in series of the closed lists at 0, and both timing kinds at 0", async () => {
    const { registry } = worker({ max: 1, inUse: 0 });
    const metrics = (await registry.getMetricsAsJSON()) as Metrics;
    expect(metric(metrics, "latchkey_sign_ins_total").values).toHaveLength(SIGN_IN_METHODS.length * SIGN_IN_OUTCOMES.length);
    expect(metric(metrics, "latchkey_sign_ins_total").values.every((v) => v.value === 0)).toBe(true);
    const counts = metric(metrics, "latchkey_db_query_duration_seconds").values.filter((v) => (v as { metricName?: string }).metricName?.endsWith("_count"));
    expect(counts.map((v) => [v.labels.kind, v.value])).toEqual([
      ["statement", 0],
      ["transaction", 0],
    ]);
    expect(DATABASE_BUCKETS[0]).toBeLessThan(0.001);
  });
});
