#!/usr/bin/env node
// `npm run bench:compare`: the shared peer harness (../shared/bench, run-all.sh) against our server
// as `npm start` runs it, side by side in the same runs, in one command:
//
//   npm run bench:compare                          # 3 runs of the harness: ours, peer-pg, bare node:http
//   npm run bench:compare -- --runs 5 -- -d 10     # 5 runs; what follows `--` goes to the harness's run.mjs
//   SKIP=node,peer-mem,next npm run bench:compare  # which of the harness's own targets to skip (default node kept)
//
// 1. Starts `node bench/run.mjs --serve` (our build, a throwaway database, bench/workspace.json,
//    the server started as `npm start` starts it) with its Prometheus listener (METRICS_PORT).
// 2. Copies the harness to $BENCH_HARNESS_DIR (default /tmp/latchkey-peer-bench) and installs its
//    dependencies there once (npm install; the shared directory itself is never written).
// 3. Runs run-all.sh --runs times against the same PostgreSQL server as ours (a database of its
//    own, `latchkey_peer_bench`, dropped at the end), with our server as the `ours` target.
// 4. Prints, per scenario, the median req/s of each target over the runs and ours ÷ peer-pg, and
//    our server's heap after start-up and after each run, and its major garbage collections per
//    run (from the metrics listener): a heap regression shows next to the figure it costs.
// 5. Writes bench/results/compare-<timestamp>.json and stops everything it started.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { root } from "../scripts/build-if-stale.mjs";
import { scrapeServerMetrics } from "./lib/metrics.mjs";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
const { values: opts } = parseArgs({
  args: split === -1 ? argv : argv.slice(0, split),
  options: {
    runs: { type: "string", default: "3" },
    port: { type: "string", default: "3600" },
    help: { type: "boolean", short: "h", default: false },
  },
});
const harnessArgs = split === -1 ? [] : argv.slice(split + 1);
if (opts.help) {
  console.log("npm run bench:compare -- [--runs N] [--port P] [-- <run.mjs options such as -d 10 -c 32>]");
  process.exit(0);
}

const RUNS = Number(opts.runs);
const PORT = Number(opts.port);
const METRICS_PORT = PORT + 2;
const PG_SERVER = process.env.BENCH_PG_SERVER ?? "postgres://postgres@127.0.0.1:5432";
const SHARED = path.resolve(root, "..", "shared", "bench");
const HARNESS = process.env.BENCH_HARNESS_DIR ?? "/tmp/latchkey-peer-bench";
const log = (m) => console.log(`[compare] ${m}`);
const cleanups = [];

async function cleanup() {
  for (const fn of cleanups.reverse()) await fn().catch((e) => console.error(`[compare] cleanup: ${e.message}`));
}
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => cleanup().finally(() => process.exit(130)));

/** Starts our server through `bench/run.mjs --serve`; resolves with the harness's OURS_* values once it serves. */
function startOurs() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["bench/run.mjs", "--serve", "--port", String(PORT)], {
      cwd: root,
      env: { ...process.env, METRICS_PORT: String(METRICS_PORT) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    cleanups.push(
      () =>
        new Promise((done) => {
          if (child.exitCode !== null) return done();
          child.once("exit", () => done());
          child.kill("SIGINT");
        }),
    );
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const line = out.split("\n").find((l) => l.trim().startsWith("OURS_URL="));
      if (line) {
        const env = Object.fromEntries(
          line
            .trim()
            .split(/\s+/)
            .filter((kv) => kv.startsWith("OURS_"))
            .map((kv) => kv.split("=")),
        );
        resolve(env);
      }
    });
    child.on("exit", (code) => reject(new Error(`bench/run.mjs --serve exited (${code}) before serving:\n${out}`)));
  });
}

function prepareHarness() {
  if (!existsSync(path.join(SHARED, "run-all.sh"))) throw new Error(`no shared harness at ${SHARED}`);
  mkdirSync(HARNESS, { recursive: true });
  cpSync(SHARED, HARNESS, { recursive: true, filter: (src) => !src.includes(`${path.sep}node_modules`) && !src.includes(`${path.sep}results`) });
  if (!existsSync(path.join(HARNESS, "node_modules", "oidc-provider"))) {
    log(`installing the harness's dependencies in ${HARNESS} (once)`);
    const r = spawnSync("npm", ["install", "--no-audit", "--no-fund"], { cwd: HARNESS, stdio: "inherit" });
    if (r.status !== 0) throw new Error("npm install in the harness failed");
  }
}

const median = (values) => {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

async function main() {
  prepareHarness();
  const peerDb = `${PG_SERVER}/latchkey_peer_bench`;
  const admin = postgres(`${PG_SERVER}/postgres`, { max: 1, onnotice: () => {} });
  await admin.unsafe("drop database if exists latchkey_peer_bench");
  await admin.unsafe("create database latchkey_peer_bench");
  cleanups.push(async () => {
    await admin.unsafe("drop database if exists latchkey_peer_bench with (force)");
    await admin.end({ timeout: 5 });
  });

  log("starting our server (bench/run.mjs --serve)");
  const ours = await startOurs();
  const metricsUrl = `http://127.0.0.1:${METRICS_PORT}/metrics`;
  const startup = await scrapeServerMetrics(metricsUrl);
  log(`our server: pid ${ours.OURS_PID}, heap used ${startup.heapUsedMiB.toFixed(1)} MiB after start-up and the bench's sign-in`);

  const runs = [];
  for (let i = 1; i <= RUNS; i++) {
    const json = path.join(HARNESS, "results", `compare-${Date.now()}-${i}.json`);
    mkdirSync(path.dirname(json), { recursive: true });
    log(`harness run ${i} of ${RUNS}`);
    const before = await scrapeServerMetrics(metricsUrl);
    const status = await new Promise((resolve) => {
      const child = spawn("bash", ["run-all.sh", ...harnessArgs], {
        cwd: HARNESS,
        stdio: "inherit",
        env: { ...process.env, ...ours, DATABASE_URL: peerDb, JSON_OUT: json, SKIP: process.env.SKIP ?? "peer-mem,next" },
      });
      child.on("exit", (code) => resolve(code));
    });
    if (status !== 0) throw new Error(`run-all.sh failed (exit ${status})`);
    const after = await scrapeServerMetrics(metricsUrl);
    runs.push({
      rows: JSON.parse(readFileSync(json, "utf8")).rows,
      server: { heapUsedMiB: after.heapUsedMiB, majorGcs: after.majorGcs - before.majorGcs, gcs: after.gcs - before.gcs, rssMiB: after.rssMiB },
    });
  }

  // Medians per target and scenario.
  const keys = new Map();
  for (const run of runs) for (const row of run.rows) if (!row.error) keys.set(`${row.target}|${row.scenario}`, [...(keys.get(`${row.target}|${row.scenario}`) ?? []), row.rps]);
  const scenarios = [...new Set([...keys.keys()].map((k) => k.split("|")[1]))];
  const targets = [...new Set([...keys.keys()].map((k) => k.split("|")[0]))];
  const med = (t, s) => median(keys.get(`${t}|${s}`) ?? []);
  console.log(`\nMedians of ${RUNS} runs of the shared harness (req/s), same runs, same PostgreSQL:\n`);
  console.log(`| scenario | ${targets.join(" | ")} | ours ÷ peer-pg |`);
  console.log(`|---|${targets.map(() => "---:").join("|")}|---:|`);
  const table = [];
  for (const s of scenarios) {
    const ratio = med("ours", s) / med("peer-pg", s);
    table.push({ scenario: s, ...Object.fromEntries(targets.map((t) => [t, med(t, s)])), oursOverPeer: ratio });
    console.log(`| ${s} | ${targets.map((t) => (Number.isFinite(med(t, s)) ? med(t, s).toFixed(0) : "-")).join(" | ")} | ${Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : "-"} |`);
  }
  console.log(`\nOur server: heap used ${startup.heapUsedMiB.toFixed(1)} MiB after start-up; per run: ${runs
    .map((r, i) => `#${i + 1} heap ${r.server.heapUsedMiB.toFixed(1)} MiB, RSS ${r.server.rssMiB.toFixed(0)} MiB, ${r.server.majorGcs} major of ${r.server.gcs} collections`)
    .join("; ")}`);
  const file = path.join(root, "bench", "results", `compare-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ runs: RUNS, harnessArgs, startup, table, perRun: runs }, null, 2));
  log(`wrote ${path.relative(process.cwd(), file)}`);
}

try {
  await main();
} catch (error) {
  console.error(`[compare] ${error.message}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
