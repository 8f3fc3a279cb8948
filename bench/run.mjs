#!/usr/bin/env node
// `npm run bench`: Latchkey's hot paths under load, one production server process, on loopback.
//
//   npm run bench                                 # everything, defaults as the shared harness
//   npm run bench -- --quick                      # smoke run: 1 s warm-up, 2 s per scenario
//   npm run bench -- -s cc,introspect,session     # some scenarios (see --list)
//   npm run bench -- -c 64 -d 20 -w 5             # connections, measured seconds, warm-up seconds
//   npm run bench -- --serve                      # set everything up, print the target for the
//                                                 # shared harness (../shared/bench), keep serving
//
// 1. Builds the app (`next build`) unless .next/BUILD_ID is newer than the sources
//    (BENCH_SKIP_BUILD=1: use whatever build exists; BENCH_REBUILD=1: always build).
// 2. Creates a throwaway database latchkey_bench_<ts> on postgres://postgres@127.0.0.1:5432
//    (BENCH_PG_SERVER to change the server), or uses DATABASE_URL as given.
// 3. Imports bench/workspace.json with the CLI (`latchkey workspace import`).
// 4. Starts the production server as one node process (the compiled server, as `npm start` runs it,
//    NODE_ENV=production) with RATE_LIMIT_PER_MINUTE=0 and RATE_LIMIT_FAILURES=0: the limiter
//    keys on the client address, and all the load comes from 127.0.0.1, so with the defaults
//    (1200 requests/min per address) it would answer 429 within a second. Its hot path (one
//    counter per request, synced to the database in the background) is still exercised by
//    RATE_LIMIT_PER_MINUTE=10000000 (--limiter).
// 5. Signs a user in through the real flow once (authorize → hosted page → password → code →
//    tokens); refreshes the access token before each scenario that presents one (they live
//    5 minutes). Seeds refresh tokens, codes and sign-in transactions with known plaintexts.
// 6. Per scenario: warm-up, then the measured run; every response's status and body (or
//    Location) are checked. Then the concurrency scenario: password sign-ins at full speed while
//    the session check runs.
// 7. Prints the table, writes bench/results/<timestamp>.json, stops the server and drops the
//    throwaway database (also on failure and Ctrl-C).
import { mkdirSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";
import postgres from "postgres";
import { scrapeServerMetrics } from "./lib/metrics.mjs";
import { cpuDelta, cpuSnapshot, findPostmaster, memory } from "./lib/proc.mjs";
import { BASELINE, SCENARIOS } from "./lib/scenarios.mjs";
import { FORM, grantOf, Human, seedScimDirectory, seedTransactions } from "./lib/seed.mjs";
import { SERVER_ENTRY, serverNodeArgs } from "../scripts/server-command.mjs";
import { ensureBuild, gitCommit, openDatabaseTarget, root, run, startProcess, waitReady } from "./lib/stack.mjs";

const { values: opts } = parseArgs({
  options: {
    connections: { type: "string", short: "c", default: "32" },
    duration: { type: "string", short: "d", default: "10" },
    warmup: { type: "string", short: "w", default: "3" },
    scenarios: { type: "string", short: "s" },
    quick: { type: "boolean", default: false },
    "login-connections": { type: "string", default: "16" },
    port: { type: "string", default: "3400" },
    pause: { type: "string", default: "1" },
    json: { type: "string" },
    "no-baseline": { type: "boolean", default: false },
    "no-concurrency": { type: "boolean", default: false },
    "no-flood": { type: "boolean", default: false },
    "flood-addresses": { type: "string", default: "4" },
    "flood-connections": { type: "string", default: "256" },
    limiter: { type: "boolean", default: false },
    serve: { type: "boolean", default: false },
    list: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});

if (opts.help) {
  console.log(
    `npm run bench -- [options]
  -c, --connections N        concurrent connections (32)
  -d, --duration S           measured seconds per scenario (10)
  -w, --warmup S             unmeasured warm-up seconds before each scenario (3)
  -s, --scenarios a,b        run only these (see --list); "concurrency" names the login + session run
      --quick                smoke run: 1 s warm-up, 2 s measured
      --login-connections N  connections sending password sign-ins in the concurrency run (16)
      --port P               server port (3400); the calibration baseline uses P+1
      --no-baseline          skip the bare node:http + PostgreSQL calibration run
      --no-concurrency       skip the login + session-check concurrency run
      --no-flood             skip signin-flood and signin-flood-64: a normal user's sign-ins while a password flood runs
      --flood-addresses N    client addresses of the flood (4), sent as X-Forwarded-For (TRUST_PROXY=true)
      --flood-connections N  the flood's connections, spread over its addresses (256)
      --limiter              keep the rate limiter counting (a limit of 10,000,000/min) instead of off
      --json FILE            results file (default bench/results/<timestamp>.json)
      --serve                set up, print the shared harness target, and keep serving until Ctrl-C
Environment: DATABASE_URL (use as-is), BENCH_PG_SERVER, BENCH_SKIP_BUILD=1, BENCH_REBUILD=1,
  MASTER_KEY, UV_THREADPOOL_SIZE, LOG_LEVEL and LOG_FORMAT (passed to the server), BENCH_SERVER_NODE_ARGS
  (node flags for the server only, e.g. "--max-old-space-size=256" or "--cpu-prof --cpu-prof-dir=/tmp/prof"),
  BENCH_SERVER_LOG (the file the server's stdout, its request log, is written to; default
  latchkey-bench-server.log in the system's temporary directory, overwritten each run).`,
  );
  process.exit(0);
}
if (opts.list) {
  for (const s of [BASELINE, ...SCENARIOS]) console.log(`${s.name.padEnd(18)} ${s.title}`);
  console.log(`${"concurrency".padEnd(18)} password sign-ins at full speed while the session check runs`);
  console.log(`${"signin-flood".padEnd(18)} a normal user's password sign-ins (p50/p95) while wrong passwords for unknown emails flood from 4 addresses`);
  console.log(`${"signin-flood-64".padEnd(18)} the same while the flood comes from 64 addresses of one IPv6 /64, 4 connections each`);
  process.exit(0);
}

const settings = {
  connections: Number(opts.connections),
  duration: opts.quick ? 2 : Number(opts.duration),
  warmup: opts.quick ? 1 : Number(opts.warmup),
  pause: opts.quick ? 0.2 : Number(opts.pause),
  loginConnections: Number(opts["login-connections"]),
  // upper bound of sign-ins per second, for seeding transactions (argon2id: tens per second per core)
  loginSeedRate: 400,
};
const selected = opts.scenarios ? new Set(opts.scenarios.split(",").map((s) => s.trim())) : null;
const wants = (name) => !selected || selected.has(name);
for (const name of selected ?? []) {
  if (![BASELINE, ...SCENARIOS].some((s) => s.name === name) && name !== "concurrency" && name !== "signin-flood" && name !== "signin-flood-64") {
    console.error(`unknown scenario ${name} (see --list)`);
    process.exit(2);
  }
}

const PORT = Number(opts.port);
const BASE = `http://127.0.0.1:${PORT}`;
const WORKSPACE = "bench";
const log = (m) => console.log(`[bench] ${m}`);

// ---- teardown, on every exit path ----
const cleanups = [];
let cleaning = null;
function cleanup() {
  cleaning ??= (async () => {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (error) {
        console.error(`[bench] cleanup: ${error.message}`);
      }
    }
  })();
  return cleaning;
}
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    log(`${signal}: stopping`);
    cleanup().finally(() => process.exit(130));
  });
}

// ---- load ----
function cannon(url, sc, { connections, duration }) {
  const counts = { badStatus: 0, badBody: 0 };
  const request = {
    ...sc.req,
    onResponse(status, body, _ctx, headers) {
      if (status !== sc.expectStatus) counts.badStatus++;
      else if (!sc.check(body, headers)) counts.badBody++;
    },
  };
  if (sc.perRequest) {
    request.setupRequest = (r) => {
      const next = sc.perRequest();
      // Supply exhausted: resend the last one, which fails and is counted.
      if (!next) return r;
      return { ...r, ...next, headers: { ...r.headers, ...next.headers } };
    };
  }
  return new Promise((resolve, reject) => {
    autocannon({ url, connections, duration, pipelining: 1, timeout: 10, requests: [request] }, (err, result) =>
      err ? reject(err) : resolve({ result, counts }),
    );
  });
}

function summarize(name, { result, counts }, cpu, mem, extra = {}) {
  return {
    scenario: name,
    rps: result.requests.average,
    total: result.requests.total,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    non2xx: result.non2xx,
    badStatus: counts.badStatus,
    mismatches: counts.badBody,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodeStats: result.statusCodeStats,
    cpu,
    peakRssMiB: mem.peakMiB,
    rssMiB: mem.rssMiB,
    ...extra,
  };
}

let metricsUrl;
let startupMetrics;
/** The server's heap and collections now (null for a target without our metrics listener). */
const serverMetrics = (target) => (target.ours && metricsUrl ? scrapeServerMetrics(metricsUrl) : Promise.resolve(null));
/** What the window cost in collections, and the heap at its end. */
function gcOf(m0, m1) {
  return m0 && m1 ? { majorGcs: m1.majorGcs - m0.majorGcs, gcs: m1.gcs - m0.gcs, majorGcSeconds: m1.majorGcSeconds - m0.majorGcSeconds, heapUsedMiB: m1.heapUsedMiB } : {};
}

async function measure(env, def, target) {
  const sc = await def.prepare(env);
  const load = { connections: settings.connections, duration: settings.warmup };
  process.stdout.write(`- ${def.name}${sc.note ? ` (${sc.note})` : ""}: warm-up ${settings.warmup}s … `);
  if (settings.warmup > 0) await cannon(target.url, sc, load);
  // The warm-up's last requests may still be running on the server (sign-ins wait for argon2).
  await sleep(settings.pause * 1000);
  process.stdout.write(`measure ${settings.duration}s … `);
  const m0 = await serverMetrics(target);
  const c0 = cpuSnapshot(target.watch);
  const out = await cannon(target.url, sc, { ...load, duration: settings.duration });
  const c1 = cpuSnapshot(target.watch);
  const row = summarize(def.name, out, cpuDelta(c0, c1), memory(target.memoryPid ?? target.watch.server), gcOf(m0, await serverMetrics(target)));
  if (sc.perRequest) row.supplyUsed = `${sc.perRequest.used()}/${sc.perRequest.total}`;
  console.log(`${row.rps.toFixed(0)} req/s p50=${row.p50}ms p99=${row.p99}ms bad-status=${row.badStatus} mismatch=${row.mismatches} err=${row.errors}`);
  await sleep(settings.pause * 1000);
  return row;
}

/** Password sign-ins at full speed while the session check runs: the session check alone, then during. */
async function concurrency(env, target) {
  const sessionDef = SCENARIOS.find((s) => s.name === "session");
  const signinDef = SCENARIOS.find((s) => s.name === "signin");
  const alone = await measure(env, sessionDef, target);
  const session = await sessionDef.prepare(env);
  // Seed enough for warm-up + run of the sign-in side.
  const signin = await signinDef.prepare(env);
  process.stdout.write(`- concurrency: ${settings.loginConnections} connections of sign-ins + ${settings.connections} of session checks, warm-up ${settings.warmup}s … `);
  if (settings.warmup > 0) {
    await Promise.all([
      cannon(target.url, session, { connections: settings.connections, duration: settings.warmup }),
      cannon(target.url, signin, { connections: settings.loginConnections, duration: settings.warmup }),
    ]);
  }
  process.stdout.write(`measure ${settings.duration}s … `);
  const m0 = await serverMetrics(target);
  const c0 = cpuSnapshot(target.watch);
  const [s, l] = await Promise.all([
    cannon(target.url, session, { connections: settings.connections, duration: settings.duration }),
    cannon(target.url, signin, { connections: settings.loginConnections, duration: settings.duration }),
  ]);
  const cpu = cpuDelta(c0, cpuSnapshot(target.watch));
  const mem = memory(target.watch.server);
  const during = summarize("session during logins", s, cpu, mem, gcOf(m0, await serverMetrics(target)));
  const logins = summarize("signin during session checks", l, cpu, mem, { supplyUsed: `${signin.perRequest.used()}/${signin.perRequest.total}` });
  const ratio = during.rps / alone.rps;
  console.log(`session ${during.rps.toFixed(0)} req/s (alone ${alone.rps.toFixed(0)}: ${(ratio * 100).toFixed(0)} %), sign-ins ${logins.rps.toFixed(0)}/s`);
  return { alone: { ...alone, scenario: "session alone" }, during, logins, ratio };
}

/**
 * A normal user's password sign-in while a flood of password posts runs, the shape of an attack
 * on the hashing queue: `--flood-connections` connections (256) spread over `--flood-addresses`
 * client addresses (4, sent as X-Forwarded-For: the server runs with TRUST_PROXY=true), each post
 * a wrong password for an email nobody has (a new one each time, so no per-email limit meets it),
 * sent again as soon as it is answered. The user, from another address, signs in one time after
 * another with the right password (a fresh seeded transaction each time); the row is the user's
 * POST latency. Target: p95 < 1 s, every sign-in reaching the client's callback.
 *
 * `one64` (the signin-flood-64 scenario): the flood's addresses are 64 addresses of one IPv6 /64
 * (2001:db8:66:1::1 to ::40), 4 connections each, and the user's address is in another /64.
 */
async function signinFlood(env, target, { one64 = false } = {}) {
  const addresses = one64 ? 64 : Number(opts["flood-addresses"]);
  const connections = one64 ? 256 : Number(opts["flood-connections"]);
  const floodAddress = (a) => (one64 ? `2001:db8:66:1::${(a + 1).toString(16)}` : `10.66.0.${a + 1}`);
  const userAddress = one64 ? "2001:db8:77:1::100" : "10.77.0.100";
  const { client } = env.human.env;
  const ttlSeconds = settings.warmup + settings.duration + 600;
  const floodTxs = await seedTransactions(env.sql, env.template, connections, { redirectUri: client.redirectUri, masterKeyHex: env.masterKeyHex, ttlSeconds });
  const userTxs = await seedTransactions(env.sql, env.template, 2000, { redirectUri: client.redirectUri, masterKeyHex: env.masterKeyHex, ttlSeconds });
  const callback = `${client.redirectUri}?code=`;
  let n = 0;
  let next = 0;
  const floodStatus = {};
  const floods = Array.from({ length: addresses }, (_, a) => ({
    url: target.url,
    connections: Math.ceil(connections / addresses),
    duration: settings.warmup + settings.duration,
    pipelining: 1,
    timeout: 30,
    requests: [
      {
        method: "POST",
        path: `${env.prefix}/sign-in/password`,
        headers: { "content-type": FORM, origin: env.base, "x-forwarded-for": floodAddress(a) },
        setupRequest: (r) => {
          const t = floodTxs[next++ % floodTxs.length];
          return {
            ...r,
            headers: { ...r.headers, cookie: t.cookie },
            body: new URLSearchParams({ tx: t.txId, csrf: t.csrf, email: `flood-${++n}@nowhere.example`, password: "not the password" }).toString(),
          };
        },
        onResponse: (status, _body, _ctx, headers) => {
          const key = status === 303 ? `303 ${/error=([a-z_]+)/.exec(headers.location ?? "")?.[1] ?? "?"}` : String(status);
          floodStatus[key] = (floodStatus[key] ?? 0) + 1;
        },
      },
    ],
  }));
  process.stdout.write(`- signin-flood${one64 ? "-64" : ""}: ${connections} connections from ${addresses} addresses${one64 ? " of one IPv6 /64" : ""}, warm-up ${settings.warmup}s … `);
  const running = floods.map((o) => new Promise((resolve, reject) => autocannon(o, (err, result) => (err ? reject(err) : resolve(result)))));
  await sleep(settings.warmup * 1000);
  process.stdout.write(`measure ${settings.duration}s … `);
  for (const key of Object.keys(floodStatus)) delete floodStatus[key];
  const c0 = cpuSnapshot(target.watch);
  const started = performance.now();
  const latencies = [];
  const outcomes = {};
  let u = 0;
  while (performance.now() - started < settings.duration * 1000 && u < userTxs.length) {
    const t = userTxs[u++];
    const sent = performance.now();
    const res = await fetch(`${env.base}${env.prefix}/sign-in/password`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": FORM, origin: env.base, cookie: t.cookie, "x-forwarded-for": userAddress },
      body: new URLSearchParams({ tx: t.txId, csrf: t.csrf, email: env.human.env.user.email, password: env.human.env.user.password }).toString(),
    });
    await res.arrayBuffer();
    latencies.push(performance.now() - sent);
    const location = res.headers.get("location") ?? "";
    const outcome = res.status === 303 && location.startsWith(callback) ? "signed-in" : `${res.status} ${/error=([a-z_]+)/.exec(location)?.[1] ?? ""}`.trim();
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuDelta(c0, cpuSnapshot(target.watch));
  const floodPosts = Object.values(floodStatus).reduce((a, b) => a + b, 0);
  await Promise.all(running);
  const sorted = latencies.sort((a, b) => a - b);
  const at = (p) => Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN);
  const row = {
    scenario: `signin during flood (${addresses} addresses${one64 ? " of one /64" : ""}, ${connections} connections)`,
    rps: sorted.length / seconds,
    total: sorted.length,
    p50: at(50),
    p90: at(90),
    p95: at(95),
    p99: at(99),
    max: Math.round(sorted.at(-1) ?? NaN),
    non2xx: sorted.length,
    badStatus: sorted.length - (outcomes["signed-in"] ?? 0),
    mismatches: 0,
    errors: 0,
    timeouts: 0,
    userOutcomes: outcomes,
    flood: { postsPerSecond: floodPosts / seconds, statuses: { ...floodStatus } },
    cpu,
    peakRssMiB: memory(target.watch.server).peakMiB,
  };
  console.log(`user p50=${row.p50}ms p95=${row.p95}ms max=${row.max}ms (${row.total} sign-ins ${JSON.stringify(outcomes)}); flood ${row.flood.postsPerSecond.toFixed(0)} posts/s ${JSON.stringify(floodStatus)}`);
  return row;
}

// ---- table ----
const fmt = (v, d = 0) => (v === undefined || v === null || Number.isNaN(v) ? "-" : Number(v).toFixed(d));
function printTable(rows) {
  const header = ["scenario", "req/s", "p50 ms", "p99 ms", "non-2xx", "bad status", "mismatch", "err", "cpu% server", "cpu% pg", "cpu% runner", "peak RSS MiB", "major GCs", "heap MiB"];
  const table = rows.map((r) => [
    r.scenario,
    fmt(r.rps),
    String(r.p50),
    String(r.p99),
    String(r.non2xx),
    String(r.badStatus),
    String(r.mismatches),
    String(r.errors + r.timeouts),
    fmt(r.cpu.server),
    fmt(r.cpu.pg),
    fmt(r.cpu.runner),
    fmt(r.peakRssMiB),
    fmt(r.majorGcs),
    fmt(r.heapUsedMiB),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(" | ")} |`;
  console.log(line(header));
  console.log(`|${widths.map((w, i) => (i === 0 ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`);
  for (const row of table) console.log(line(row));
}

/**
 * The goals of docs/performance.md that one run can check (the 2x-peer goals need the peer in the
 * same run: `npm run bench:compare`). Password sign-ins are judged by docs/performance.md's
 * argon2-alone figure, not here.
 */
function targets(rows, conc, peakMiB) {
  const by = (name) => rows.find((r) => r.scenario === name);
  const out = [];
  const add = (name, met, detail) => out.push({ name, met, detail });
  const base = by(BASELINE.name);
  const share = (n, min) => {
    const r = by(n);
    if (r && base) add(`${n}: >= ${min} % of bare node:http + one PostgreSQL select`, r.rps >= (min / 100) * base.rps, `${((r.rps / base.rps) * 100).toFixed(0)} % (${fmt(r.rps)} vs ${fmt(base.rps)} req/s)`);
  };
  for (const n of ["session", "check-allowed", "userinfo"]) share(n, 50);
  share("refresh", 15);
  share("code", 5);
  // Documents that change only with configuration (issue 38's goals).
  for (const n of ["discovery", "jwks"]) share(n, 60);
  const page = by("signin-page");
  if (page) add("signin-page: >= 600 req/s (the hosted sign-in page, GET)", page.rps >= 600, `${fmt(page.rps)} req/s`);
  if (conc) add("session check during password sign-ins: >= 50 % of its rate alone", conc.ratio >= 0.5, `${(conc.ratio * 100).toFixed(0)} %`);
  if (startupMetrics) add("heap used after start-up: <= 60 MB", startupMetrics.heapUsedMiB * 1.048576 <= 60, `${(startupMetrics.heapUsedMiB * 1.048576).toFixed(1)} MB`);
  add("peak RSS through the run: <= 350 MiB", peakMiB <= 350, `${fmt(peakMiB)} MiB`);
  const loaded = rows.filter((r) => r.majorGcs !== undefined && r.total > 0);
  if (loaded.length) {
    const worst = loaded.reduce((w, r) => (r.majorGcs / settings.duration > w.majorGcs / settings.duration ? r : w));
    const perMinute = (worst.majorGcs / settings.duration) * 60;
    add("major collections at full load: a handful per minute (<= 10)", perMinute <= 10, `${perMinute.toFixed(0)}/min at most (${worst.scenario})`);
  }
  return out;
}

// ---- main ----
async function main() {
  const started = new Date();
  const git = gitCommit();
  log(`${started.toISOString()}  commit ${git.commit}${git.dirty ? " (uncommitted changes)" : ""}  node ${process.version}  ${os.cpus().length} cpus`);
  log(`connections=${settings.connections} warm-up=${settings.warmup}s duration=${settings.duration}s; autocannon runs in this process on the same machine`);
  await ensureBuild(log);

  const database = await openDatabaseTarget(log);
  cleanups.push(() => database.drop());
  const masterKeyHex = process.env.MASTER_KEY && /^[0-9a-f]{64}$/i.test(process.env.MASTER_KEY) ? process.env.MASTER_KEY : randomBytes(32).toString("hex");
  const env = {
    ...process.env,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    DATABASE_URL: database.url,
    MASTER_KEY: masterKeyHex,
    PORT: String(PORT),
    PUBLIC_URL: BASE,
    RATE_LIMIT_PER_MINUTE: opts.limiter ? "10000000" : "0",
    RATE_LIMIT_FAILURES: opts.limiter ? "10000000" : "0",
    // signin-flood sends its client addresses as X-Forwarded-For (nothing else sends the header).
    TRUST_PROXY: "true",
    // Its heap and garbage collections, read around each measurement (bench/lib/metrics.mjs).
    METRICS_PORT: process.env.METRICS_PORT || String(PORT + 2),
  };

  log("importing bench/workspace.json");
  await run(process.execPath, ["--import", "tsx", "cli/latchkey.ts", "workspace", "import", "bench/workspace.json"], env);

  log(`starting the production server on ${BASE}`);
  // The server as `npm start` runs it (scripts/server-command.mjs); BENCH_SERVER_NODE_ARGS adds node
  // flags for the server only, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (later flags win).
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean);
  // Its stdout (the start-up lines, then one JSON line per request) goes to a file, as a log shipper would take it.
  const serverLog = process.env.BENCH_SERVER_LOG || path.join(os.tmpdir(), "latchkey-bench-server.log");
  const server = startProcess("server", [...serverNodeArgs(env), ...nodeArgs, SERVER_ENTRY], env, { stdoutFile: serverLog });
  cleanups.push(() => server.stop());
  log(`server log (stdout): ${serverLog}`);
  await waitReady(`${BASE}/t/${WORKSPACE}/.well-known/openid-configuration`, server);
  log(`server pid ${server.pid}`);
  metricsUrl = `http://127.0.0.1:${env.METRICS_PORT}/metrics`;
  // With WEB_CONCURRENCY above 1 the workers may answer before the first process's metrics listener is up.
  await waitReady(metricsUrl, server);
  startupMetrics = await scrapeServerMetrics(metricsUrl);
  log(`heap used after start-up: ${startupMetrics.heapUsedMiB.toFixed(1)} MiB (RSS ${startupMetrics.rssMiB.toFixed(0)} MiB)`);

  const sql = postgres(database.url, { max: 2, onnotice: () => {} });
  cleanups.push(() => sql.end({ timeout: 5 }));
  const human = new Human({
    base: BASE,
    workspace: WORKSPACE,
    client: { id: "web", secret: "bench-web-secret-0123456789abcdef0123456789", redirectUri: "http://127.0.0.1:9/callback" },
    user: { email: "ada@bench.example", password: "correct horse battery staple" },
    scope: "openid email profile read:things",
    resource: "https://api.example.com",
  });
  log("signing in through the real flow (authorize → hosted page → password → code → tokens)");
  await human.signIn();
  const scenarioEnv = {
    base: BASE,
    prefix: `/t/${WORKSPACE}`,
    issuer: `${BASE}/t/${WORKSPACE}`,
    resource: "https://api.example.com",
    m2m: { id: "m2m", secret: "bench-m2m-secret-0123456789abcdef0123456789" },
    human,
    sql,
    template: await grantOf(sql, human.refreshToken),
    masterKeyHex,
    opts: settings,
    /** The SCIM scenarios' directory of 10,000 users, seeded once for every scenario that asks. */
    scimDirectory() {
      this.scim ??= seedScimDirectory(sql, this.template, 10_000);
      return this.scim;
    },
  };

  const postmaster = findPostmaster();
  const target = { url: BASE, ours: true, watch: { server: server.pid, ...(postmaster ? { pg: postmaster } : {}) } };

  if (opts.serve) {
    console.log(`\nServing. Point the shared harness at it (from a copy of ../shared/bench with its dependencies installed):\n`);
    console.log(
      `  node run.mjs --target 'name=ours,kind=ours,url=${BASE},tenant=${WORKSPACE},client_id=m2m,client_secret=${scenarioEnv.m2m.secret},pid=${server.pid}' --target ...\n`,
    );
    console.log(`  OURS_URL=${BASE} OURS_TENANT=${WORKSPACE} OURS_CLIENT_ID=m2m OURS_CLIENT_SECRET=${scenarioEnv.m2m.secret} OURS_PID=${server.pid} ./run-all.sh\n`);
    console.log("Ctrl-C stops the server and drops the throwaway database.");
    await server.exited;
    return;
  }

  const rows = [];
  if (!opts["no-baseline"] && wants(BASELINE.name)) {
    const baseline = startProcess("baseline", [path.join("bench", "baseline.mjs"), "--port", String(PORT + 1)], { ...process.env, DATABASE_URL: database.url });
    cleanups.push(() => baseline.stop());
    const url = `http://127.0.0.1:${PORT + 1}`;
    await waitReady(`${url}/ping`, baseline, 20_000);
    rows.push(await measure(scenarioEnv, BASELINE, { url, watch: { server: baseline.pid, ...(postmaster ? { pg: postmaster } : {}) } }));
    await baseline.stop();
  }
  for (const def of SCENARIOS) {
    if (!wants(def.name)) continue;
    try {
      rows.push(await measure(scenarioEnv, def, target));
    } catch (error) {
      console.log(`\n! ${def.name}: ${error.message}`);
      rows.push({ scenario: def.name, error: error.message });
    }
  }
  let conc = null;
  if (!opts["no-concurrency"] && wants("concurrency")) conc = await concurrency(scenarioEnv, target);
  if (!opts["no-flood"] && wants("signin-flood")) rows.push(await signinFlood(scenarioEnv, target));
  if (!opts["no-flood"] && wants("signin-flood-64")) rows.push(await signinFlood(scenarioEnv, target, { one64: true }));

  const finalMem = memory(server.pid);
  const ok = rows.filter((r) => !r.error);
  console.log("");
  printTable([...ok, ...(conc ? [conc.alone, conc.during, conc.logins] : [])]);
  console.log(`\ncpu% = % of one core over the measured window (the machine has ${os.cpus().length}); server = the server process and its threads,`);
  console.log("pg = the PostgreSQL postmaster and its backends, runner = autocannon (this process). non-2xx is autocannon's count; bad status =");
  console.log("answers whose status is not the expected one (303 for the sign-in POST); mismatch = expected status, wrong body/Location.");
  if (conc) console.log(`concurrency: the session check keeps ${(conc.ratio * 100).toFixed(0)} % of its throughput while ${fmt(conc.logins.rps)} sign-ins/s run.`);
  const goals = targets(ok, conc, finalMem.peakMiB);
  console.log("\nGoals checkable within this run (docs/performance.md; the 2x-peer goals need the peer: npm run bench:compare):");
  for (const g of goals) console.log(`  ${g.met ? "met   " : "MISSED"}  ${g.name}: ${g.detail}`);
  for (const r of rows.filter((r) => r.error)) console.log(`  ERROR   ${r.scenario}: ${r.error}`);

  const stamp = started.toISOString().replace(/[:.]/g, "-");
  const file = opts.json ?? path.join(root, "bench", "results", `${stamp}.json`);
  mkdirSync(path.dirname(file), { recursive: true });
  const meta = {
    date: started.toISOString(),
    ...git,
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    loadavgAtStart: os.loadavg(),
    settings,
    serverEnv: { UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? null, nodeArgs: process.env.BENCH_SERVER_NODE_ARGS ?? null, limiter: opts.limiter },
    peakRssMiB: finalMem.peakMiB,
    startupHeapUsedMiB: startupMetrics?.heapUsedMiB ?? null,
  };
  writeFileSync(file, JSON.stringify({ meta, rows, concurrency: conc, targets: goals }, null, 2));
  log(`wrote ${path.relative(process.cwd(), file)}`);
  const failed = [...rows, ...(conc ? [conc.during, conc.logins] : [])].some((r) => r.error || !r.total || r.badStatus || r.mismatches || r.errors || r.timeouts);
  if (failed) process.exitCode = 1;
}

try {
  await main();
} catch (error) {
  console.error(`[bench] ${error.stack ?? error.message}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
