import { AggregatorRegistry, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { httpRequestMetrics } from "./http";

describe("the HTTP metrics of a cluster", () => {
  it("add up across workers: each counter, and each histogram bucket, count and sum", async () => {
    // Two workers' registries, as the first process's aggregator receives them.
    const workers = [new Registry(), new Registry()];
    const [one, two] = workers.map((r) => httpRequestMetrics(r));
    one.record("token", "POST", 200, 0.004);
    one.record("token", "POST", 200, 0.3);
    two.record("token", "POST", 200, 0.02);
    two.record("token", "POST", 401, 0.002);
    two.record("jwks", "PROPFIND", "aborted", 0.001);
    const sum = AggregatorRegistry.aggregate(await Promise.all(workers.map((r) => r.getMetricsAsJSON())));
    const text = await sum.metrics();
    expect(text).toContain('latchkey_http_requests_total{family="token",method="POST",status="200"} 3');
    expect(text).toContain('latchkey_http_requests_total{family="token",method="POST",status="401"} 1');
    // A method the application does not serve is not a label value of its own.
    expect(text).toContain('latchkey_http_requests_total{family="jwks",method="other",status="aborted"} 1');
    expect(text).toContain('latchkey_http_request_duration_seconds_count{family="token"} 4');
    expect(text).toContain('latchkey_http_request_duration_seconds_bucket{le="0.005",family="token"} 2');
    expect(text).toContain('latchkey_http_request_duration_seconds_bucket{le="0.025",family="token"} 3');
    expect(text).toContain('latchkey_http_request_duration_seconds_bucket{le="+Inf",family="token"} 4');
    expect(text).toMatch(/latchkey_http_request_duration_seconds_sum\{family="token"\} 0\.326\d*\n/);
  });

  it("are created once per registry", () => {
    const registry = new Registry();
    expect(httpRequestMetrics(registry)).toBe(httpRequestMetrics(registry));
  });
});
