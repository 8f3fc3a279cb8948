/**
 * The HTTP request metrics of the Prometheus listener (./listener.ts, METRICS_PORT): every answer
 * counted by family, method and status, and its duration by family. Recorded from the signal
 * `request_answered` (lib/signals), which the production listener emits in the same place as the
 * request's log line (lib/server/request-log.ts). Labels come from small fixed sets only (the request families of
 * lib/server/request-family.ts, the methods the application serves, HTTP status codes): never a
 * workspace, a client, a user or a path, so the series stay few whatever the traffic.
 *
 * With WEB_CONCURRENCY workers each worker records its own; the first process answers the scrape
 * with their sum (prom-client's aggregator adds up counters and each histogram bucket, count and
 * sum alike, which is their sum over the cluster).
 */
import { Counter, Histogram, register, type Registry } from "prom-client";
import { observe, type Observer } from "../signals";
import type { HttpRecorder } from "./index";

export const HTTP_REQUESTS_TOTAL = "latchkey_http_requests_total";
export const HTTP_REQUEST_DURATION = "latchkey_http_request_duration_seconds";

/** From a millisecond (a cached discovery document) to the five seconds past which an answer is late anyway. */
export const HTTP_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** The methods the application serves (lib/server/node-server.ts); any other is counted as `other`. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** The metrics of a registry, and the one observer that records into them. */
interface HttpMetrics extends HttpRecorder {
  observer: Observer<"request_answered">;
}

const created = new WeakMap<Registry, HttpMetrics>();

/** The request metrics in `registry` (prom-client's default one, which the listener answers), created on first use. */
export function httpRequestMetrics(registry: Registry = register): HttpMetrics {
  let metrics = created.get(registry);
  if (metrics) return metrics;
  const requests = new Counter({
    name: HTTP_REQUESTS_TOTAL,
    help: "HTTP requests answered, by family (what the request was for), method and status",
    labelNames: ["family", "method", "status"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: HTTP_REQUEST_DURATION,
    help: "Time from a request's arrival to its answer's last byte, by family",
    labelNames: ["family"] as const,
    buckets: HTTP_DURATION_BUCKETS,
    registers: [registry],
  });
  const record: HttpRecorder["record"] = (family, method, status, seconds) => {
    requests.inc({ family, method: METHODS.has(method) ? method : "other", status: String(status) });
    duration.observe({ family }, seconds);
  };
  metrics = { record, observer: (answered) => record(answered.family, answered.method, answered.status, answered.seconds) };
  created.set(registry, metrics);
  return metrics;
}

/**
 * Records every answer in `registry` from now on (by default prom-client's one, which the listener
 * answers), observing `request_answered` (once per registry however often it is asked); returns
 * what undoes it (a test scraping a registry of its own).
 */
export function recordHttpRequests(registry: Registry = register): () => void {
  return observe("request_answered", httpRequestMetrics(registry).observer);
}
