/**
 * The Prometheus listener (METRICS_PORT): a port of its own, bound to loopback unless
 * METRICS_HOST says otherwise, so metrics are never answered on an issuer's listener. It answers
 * `GET /metrics` (the text exposition format) and 404 to everything else.
 *
 * What it exposes is the process: Node's default metrics from prom-client (CPU time,
 * resident memory, heap used and total per space, garbage collections by kind with their
 * durations, event-loop lag, open handles). A heap that climbs towards its limit, or major
 * collections by the hundred per minute, show here before the latency does. The HTTP requests
 * (./http.ts). And the domain metrics (./prometheus.ts: tokens issued, sign-ins, limit refusals,
 * refresh-token reuse, 503s, database timings and pool), both observing the domain signals
 * (lib/signals). Nothing is collected, and nothing observes the signals, unless METRICS_PORT is set.
 *
 * With WEB_CONCURRENCY workers, each worker collects its own and the first process answers the
 * scrape with their sum (prom-client's AggregatorRegistry asks every worker over the cluster's
 * channel); gauges such as the heap are summed too, so divide by the number of workers for one
 * process's figure.
 */
import { createServer, type Server } from "node:http";
import { AggregatorRegistry, collectDefaultMetrics, register } from "prom-client";
import type { MetricsSettings } from "../config";
import { recordHttpRequests } from "./http";
import type { SignInMethod } from "../signals";
import { enableDomainMetrics } from "./prometheus";

/**
 * Starts collecting this process's metrics: a single process, or a worker of a cluster, which
 * then also answers the first process's requests for them (an AggregatorRegistry adds that
 * listener to the worker's cluster channel).
 */
export function collectProcessMetrics({ clusterWorker = false, signInMethods }: { clusterWorker?: boolean; signInMethods: readonly SignInMethod[] }): void {
  collectDefaultMetrics({ register });
  // Tokens, sign-ins, limit refusals, dependency failures, the database: observed from the domain signals (./prometheus.ts).
  enableDomainMetrics(signInMethods);
  // Every answer of the production listener, by family, method and status (./http.ts, from the signal request_answered).
  recordHttpRequests();
  if (clusterWorker) new AggregatorRegistry();
}

export interface MetricsListener {
  server: Server;
  /** The port it listens on (the configured one, or the one the system chose for port 0). */
  port: number;
  close(): Promise<void>;
}

/**
 * Listens for scrapes. `source` answers one: the process's own registry, or, in the first process
 * of a cluster, the workers' sum (`clusterSource`).
 */
export async function startMetricsListener(settings: MetricsSettings, source: () => Promise<{ body: string; contentType: string }>): Promise<MetricsListener> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("Not found\n");
      return;
    }
    source().then(
      ({ body, contentType }) => {
        res.writeHead(200, { "content-type": contentType, "cache-control": "no-store" });
        res.end(req.method === "HEAD" ? undefined : body);
      },
      (error: unknown) => {
        console.error(`latchkey: metrics could not be collected: ${error instanceof Error ? error.message : String(error)}`);
        res.writeHead(503, { "content-type": "text/plain; charset=utf-8" }).end("Metrics unavailable\n");
      },
    );
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(settings.port, settings.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : settings.port;
  return {
    server,
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())).then(() => undefined),
  };
}

/** This process's metrics as a scrape answer. */
export function processSource(): () => Promise<{ body: string; contentType: string }> {
  return async () => ({ body: await register.metrics(), contentType: register.contentType });
}

/** The sum of the cluster's workers, for the first process (which serves no requests itself). */
export function clusterSource(): () => Promise<{ body: string; contentType: string }> {
  const aggregator = new AggregatorRegistry();
  return async () => ({ body: await aggregator.clusterMetrics(), contentType: aggregator.contentType });
}
