/**
 * The Prometheus listener of the real server (lib/metrics/listener.ts, on the production build):
 * METRICS_PORT serves the process's metrics (heap, garbage collections), the HTTP requests
 * (lib/metrics/http.ts) and the domain metrics (lib/metrics) on a listener of its own, and
 * each request is a JSON line on stdout; the issuer's listener never answers them. With
 * WEB_CONCURRENCY (PostgreSQL) the first process answers with the workers' sum. Needs the
 * production build like the equivalence test (under CI=1 a missing build fails instead of skipping).
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import { DEFAULT_POOL_SIZE } from "../../db/client";
import { createDatabase, dropDatabase, freshDatabaseName } from "../setup/database";
import { freePort, listening, runRealServer, startRealServer as start, type RealServer as Started } from "../helpers/real-server";

const databaseUrl = inject("databaseUrl");

/** One sample's value: `name{labels} value` (the first line that matches). */
function sample(text: string, name: string, labels = ""): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ""} `) || (!labels && l.startsWith(`${name}{`)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

/**
 * A wrong password for the demo user through the hosted sign-in page, as a browser posts it: the
 * page and its form post are answered by Next, whose bundles hold their own copy of lib/.
 */
async function failedSignIn(base: string): Promise<void> {
  const verifier = randomBytes(32).toString("base64url");
  const query = new URLSearchParams({
    client_id: "demo-web",
    redirect_uri: "http://localhost:4000/auth/callback",
    response_type: "code",
    scope: "openid",
    state: randomBytes(24).toString("base64url"),
    nonce: randomBytes(24).toString("base64url"),
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  });
  const authorize = await fetch(`${base}/t/demo/oauth2/authorize?${query}`, { redirect: "manual" });
  expect(authorize.status).toBe(303);
  const cookie = authorize.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const page = new URL(authorize.headers.get("location")!, base);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await (await fetch(page, { headers: { cookie } })).text())?.[1];
  expect(csrf).toBeTruthy();
  const post = await fetch(`${base}/t/demo/sign-in/password`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie, origin: base, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ tx: page.searchParams.get("tx")!, csrf: csrf!, email: "demo@example.com", password: "not the demo password" }),
  });
  expect(post.status).toBe(303);
  expect(post.headers.get("location")).toContain("error=invalid_credentials");
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

  it("serves the heap, the garbage collections, the HTTP requests and the domain metrics on METRICS_PORT, never on the issuer's listener; one JSON line per request on stdout", async () => {
    const metricsPort = await freePort();
    // Two failed client authentications per client and address: the third attempt is refused by the limit.
    const e = await env({ METRICS_PORT: String(metricsPort), RATE_LIMIT_FAILURES: "2" });
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
    // The requests (lib/metrics/http.ts), by family, method and status.
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
    // The domain metrics: a sign-in refused on a page Next answers and a client refused by its
    // failures at the token endpoint (answered before Next) are counted alike; the database's
    // statements are timed, and its pool reported.
    await failedSignIn(`http://127.0.0.1:${e.PORT}`);
    const wrongSecret = () =>
      fetch(`http://127.0.0.1:${e.PORT}/t/demo/oauth2/token`, {
        method: "POST",
        headers: { authorization: `Basic ${Buffer.from("demo-web:wrong").toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=refresh_token&refresh_token=x",
      });
    for (let i = 0; i < 3; i++) expect((await wrongSecret()).status).toBe(401);
    const domain = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(sample(domain, "latchkey_sign_ins_total", 'method="password",outcome="failure"')).toBe(1);
    expect(sample(domain, "latchkey_sign_ins_total", 'method="passkey",outcome="success"')).toBe(0);
    expect(sample(domain, "latchkey_rate_limit_refusals_total", 'policy="authfail"')).toBe(1);
    expect(sample(domain, "latchkey_db_query_duration_seconds_count", 'kind="statement"')).toBeGreaterThan(0);
    expect(sample(domain, "latchkey_db_pool_connections", 'state="max"')).toBe(databaseUrl ? DEFAULT_POOL_SIZE : 1);
    expect(domain).toMatch(/^# TYPE latchkey_tokens_issued_total counter$/m);

    // Only /metrics, only read.
    expect((await fetch(`http://127.0.0.1:${metricsPort}/`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { method: "POST" })).status).toBe(404);
    // The issuer's listener does not answer them.
    const onIssuer = await fetch(`http://127.0.0.1:${e.PORT}/metrics`);
    expect(onIssuer.status).toBe(404);
    expect(await onIssuer.text()).not.toContain("nodejs_heap_size_used_bytes");
    // A production server of its own (started, migrated, the demo seeded): as the other dispatch tests that start one, more than the default 30 s on a loaded machine.
  }, 120_000);

  it.runIf(Boolean(databaseUrl))("WEB_CONCURRENCY=2: the first process answers with its workers' metrics, the domain metrics included (summed)", async () => {
    const metricsPort = await freePort();
    const e = await env({ METRICS_PORT: String(metricsPort), WEB_CONCURRENCY: "2", DATABASE_POOL_SIZE: "3" });
    const server = start(e);
    running.push(server);
    await listening(server);
    for (let i = 0; i < 50; i++) (await fetch(`http://127.0.0.1:${e.PORT}/`)).body?.cancel();
    await failedSignIn(`http://127.0.0.1:${e.PORT}`);
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
    // The domain metrics, summed: whichever worker answered the sign-in, and both workers' pools of DATABASE_POOL_SIZE.
    expect(sample(text, "latchkey_sign_ins_total", 'method="password",outcome="failure"')).toBe(1);
    expect(sample(text, "latchkey_db_pool_connections", 'state="max"')).toBe(6);
    expect(sample(text, "latchkey_db_query_duration_seconds_count", 'kind="statement"')).toBeGreaterThan(0);
  }, 120_000);
});
