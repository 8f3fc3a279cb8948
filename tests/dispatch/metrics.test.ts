/**
 * The Prometheus listener of the real server (lib/server/metrics.ts, on the production build):
 * METRICS_PORT serves the process's metrics (heap, garbage collections) and the HTTP requests
 * (lib/server/request-metrics.ts) on a listener of its own, and each request is a JSON line on stdout;
 * the issuer's listener never answers them. With
 * WEB_CONCURRENCY (PostgreSQL) the first process answers with the workers' sum. Needs the
 * production build like the equivalence test (under CI=1 a missing build fails instead of skipping).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import { createDatabase, dropDatabase, freshDatabaseName } from "../setup/database";
import { freePort, listening, runRealServer, startRealServer as start, type RealServer as Started } from "../helpers/real-server";

const databaseUrl = inject("databaseUrl");

/** One sample's value: `name{labels} value` (the first line that matches). */
function sample(text: string, name: string, labels = ""): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ""} `) || (!labels && l.startsWith(`${name}{`)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe.runIf(runRealServer)("the metrics listener of the real server", () => {
  const running: Started[] = [];
  const dataDirs: string[] = [];
  const ownName = freshDatabaseName("latchkey_metrics");
  let ownDatabase: string | undefined;
  const MASTER_KEY = randomBytes(32).toString("hex");
  const database = async () => (ownDatabase ??= await createDatabase(databaseUrl!, ownName));

  afterEach(async () => {
    for (const server of running.splice(0)) {
      if (server.child.exitCode === null) {
        server.child.kill("SIGTERM");
        await server.exited;
      }
    }
  });
  afterAll(async () => {
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
    if (ownDatabase) await dropDatabase(databaseUrl!, ownName);
  });

  async function env(extra: Record<string, string>): Promise<Record<string, string>> {
    const port = await freePort();
    const base: Record<string, string> = { PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, ...extra };
    if (databaseUrl) return { ...base, DATABASE_URL: await database(), MASTER_KEY };
    const dir = mkdtempSync(path.join(tmpdir(), "latchkey-metrics-"));
    dataDirs.push(dir);
    return { ...base, DATA_DIR: dir };
  }

  it("serves the heap, the garbage collections and the HTTP requests on METRICS_PORT, never on the issuer's listener; one JSON line per request on stdout", async () => {
    const metricsPort = await freePort();
    const e = await env({ METRICS_PORT: String(metricsPort) });
    const server = start(e);
    running.push(server);
    await listening(server);
    expect(server.output()).toContain(`Metrics:         http://127.0.0.1:${metricsPort}/metrics`);

    // Some work, so that the collector has run.
    for (let i = 0; i < 50; i++) await (await fetch(`http://127.0.0.1:${e.PORT}/t/demo/.well-known/openid-configuration`)).arrayBuffer();
    (await fetch(`http://127.0.0.1:${e.PORT}/`)).body?.cancel();
    const scrape = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await scrape.text();
    expect(sample(text, "nodejs_heap_size_used_bytes")).toBeGreaterThan(1_000_000);
    expect(text).toMatch(/^nodejs_gc_duration_seconds_count\{kind="(major|minor|incremental|weakcb)"\} \d+$/m);
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(1_000_000);
    // The requests (lib/server/request-metrics.ts), by family, method and status.
    expect(sample(text, "latchkey_http_requests_total", 'family="discovery",method="GET",status="200"')).toBe(50);
    expect(sample(text, "latchkey_http_request_duration_seconds_count", 'family="discovery"')).toBe(50);
    // The log: JSON lines on stdout under npm start's NODE_ENV, one per request (written asynchronously).
    const discoveryLines = () =>
      server
        .output()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((record) => record.msg === "request" && record.family === "discovery");
    for (let i = 0; i < 50 && discoveryLines().length < 50; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    const lines = discoveryLines();
    expect(lines).toHaveLength(50);
    expect(lines[0]).toMatchObject({ level: "info", method: "GET", workspace: "demo", status: 200 });
    expect(lines[0].client).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    expect(new Set(lines.map((line) => line.request_id)).size).toBe(50);
    // Only /metrics, only read.
    expect((await fetch(`http://127.0.0.1:${metricsPort}/`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { method: "POST" })).status).toBe(404);
    // The issuer's listener does not answer them.
    const onIssuer = await fetch(`http://127.0.0.1:${e.PORT}/metrics`);
    expect(onIssuer.status).toBe(404);
    expect(await onIssuer.text()).not.toContain("nodejs_heap_size_used_bytes");
  });

  it.runIf(Boolean(databaseUrl))("WEB_CONCURRENCY=2: the first process answers with its workers' metrics (summed)", async () => {
    const metricsPort = await freePort();
    const e = await env({ METRICS_PORT: String(metricsPort), WEB_CONCURRENCY: "2" });
    const server = start(e);
    running.push(server);
    await listening(server);
    for (let i = 0; i < 50; i++) (await fetch(`http://127.0.0.1:${e.PORT}/`)).body?.cancel();
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    // The workers answered (a worker that does not makes the scrape time out with 503).
    const heap = sample(text, "nodejs_heap_size_used_bytes");
    expect(heap).toBeGreaterThan(2 * 10_000_000);
    expect(text).toMatch(/^nodejs_gc_duration_seconds_count\{kind="[a-z]+"\} \d+$/m);
    // Every request counted once, whichever worker answered it (by status: a page whose body the client cancelled counts as aborted).
    const counted = text
      .split("\n")
      .filter((line) => line.startsWith('latchkey_http_requests_total{family="other",method="GET",'))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
    expect(counted).toBe(50);
    expect(sample(text, "latchkey_http_request_duration_seconds_count", 'family="other"')).toBe(50);
  });
});
