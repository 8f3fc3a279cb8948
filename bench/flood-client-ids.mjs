#!/usr/bin/env node
// `npm run bench:flood`: the production server's memory under a stream of token requests that
// each carry a new bogus client id of 10 KB in HTTP Basic (every one fails authentication).
//
//   npm run bench:flood                                   # 50,000 requests, 16 connections
//   npm run bench:flood -- -n 20000 -c 8 --id-bytes 4096  # fewer, fewer connections, smaller ids
//
// 1. Uses the existing production build (`next build` only when there is none): every request
//    goes to the token endpoint, which the server answers before Next.
// 2. Creates a throwaway database latchkey_bench_<ts> (as `npm run bench`; DATABASE_URL as given).
// 3. Imports bench/workspace.json and starts the server as `npm start` runs it
//    (scripts/server-command.mjs: the 256 MiB heap limit) on a free port, with
//    RATE_LIMIT_PER_MINUTE=0 (all the load comes from 127.0.0.1, and the per-address limit would
//    otherwise answer 429 before client authentication) and RATE_LIMIT_FAILURES=10 (the
//    default, so every failure is counted by the limiter as in production).
// 4. Streams the requests, samples the server's RSS from /proc every 250 ms, and prints RSS at
//    the start, at each 10,000 requests and at the end.
// 5. Passes when the server stayed up, answered every request with 401 invalid_client, and RSS
//    stayed flat: no sample after the 10,000 mark (the first 10,000 warm the process up) is more
//    than FLAT_MIB above it.
import { randomBytes } from "node:crypto";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import { existsSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { memory } from "./lib/proc.mjs";
import { SERVER_ENTRY, serverNodeArgs } from "../scripts/server-command.mjs";
import { ensureBuild, openDatabaseTarget, root, run, startProcess, waitReady } from "./lib/stack.mjs";

const FLAT_MIB = 48;

const { values: opts } = parseArgs({
  options: {
    requests: { type: "string", short: "n", default: "50000" },
    connections: { type: "string", short: "c", default: "16" },
    "id-bytes": { type: "string", default: "10240" },
    every: { type: "string", default: "10000" },
  },
});
const TOTAL = Number(opts.requests);
const CONNECTIONS = Number(opts.connections);
const ID_BYTES = Number(opts["id-bytes"]);
const EVERY = Number(opts.every);
const log = (m) => console.log(`[flood] ${m}`);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const cleanups = [];
async function cleanup() {
  for (const fn of cleanups.splice(0).reverse()) {
    try {
      await fn();
    } catch (error) {
      console.error(`[flood] cleanup: ${error.message}`);
    }
  }
}
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => cleanup().finally(() => process.exit(130)));

/** A new client id of ID_BYTES URL-safe characters: no two requests share one. */
function bogusId() {
  return randomBytes(Math.ceil((ID_BYTES * 3) / 4)).toString("base64url").slice(0, ID_BYTES);
}

function post(agent, port, clientId) {
  const body = "grant_type=client_credentials";
  const authorization = `Basic ${Buffer.from(`${clientId}:x`).toString("base64")}`;
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path: "/t/bench/oauth2/token",
        method: "POST",
        agent,
        headers: { authorization, "content-type": "application/x-www-form-urlencoded", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
        res.on("error", (e) => resolve({ status: 0, body: e.message }));
      },
    );
    req.on("error", (e) => resolve({ status: 0, body: e.message }));
    req.end(body);
  });
}

async function main() {
  log(`node ${process.version}; ${TOTAL} requests, ${CONNECTIONS} connections, client ids of ${ID_BYTES} bytes`);
  if (existsSync(path.join(root, ".next", "BUILD_ID"))) log("using the existing build (the token endpoint is answered before Next)");
  else await ensureBuild(log);

  const database = await openDatabaseTarget(log);
  cleanups.push(() => database.drop());
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    DATABASE_URL: database.url,
    MASTER_KEY: randomBytes(32).toString("hex"),
    PORT: String(port),
    PUBLIC_URL: base,
    RATE_LIMIT_PER_MINUTE: "0",
    RATE_LIMIT_FAILURES: "10",
  };
  delete env.WEB_CONCURRENCY;
  log("importing bench/workspace.json");
  await run(process.execPath, ["--import", "tsx", "cli/latchkey.ts", "workspace", "import", "bench/workspace.json"], env);
  // Its request log (one JSON line per request) to a file, not through this process.
  const serverLog = process.env.BENCH_SERVER_LOG || path.join(os.tmpdir(), "latchkey-flood-server.log");
  const server = startProcess("server", [...serverNodeArgs(env), SERVER_ENTRY], env, { stdoutFile: serverLog });
  cleanups.push(() => server.stop());
  await waitReady(`${base}/t/bench/.well-known/openid-configuration`, server);
  let exited = null;
  server.exited.then((code) => (exited = code));
  log(`server pid ${server.pid} on ${base}`);

  let peak = 0;
  let warmedUp = false;
  let peakAfterWarmUp = 0;
  const rss = () => {
    const m = memory(server.pid).rssMiB;
    if (m > peak) peak = m;
    if (warmedUp && m > peakAfterWarmUp) peakAfterWarmUp = m;
    return m;
  };
  const sampler = setInterval(rss, 250);
  cleanups.push(() => clearInterval(sampler));

  const marks = [{ at: 0, rssMiB: rss() }];
  log(`RSS at the start: ${marks[0].rssMiB.toFixed(1)} MiB`);
  const statuses = new Map();
  let sent = 0;
  let done = 0;
  let unexpected = 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  cleanups.push(() => agent.destroy());
  const started = Date.now();
  async function worker() {
    while (sent < TOTAL && exited === null) {
      sent++;
      const res = await post(agent, port, bogusId());
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status !== 401 || !res.body.includes("invalid_client")) unexpected++;
      done++;
      if (done % EVERY === 0) {
        const m = rss();
        if (done === EVERY) warmedUp = true;
        marks.push({ at: done, rssMiB: m });
        log(`${String(done).padStart(6)} requests: RSS ${m.toFixed(1)} MiB (${((done / (Date.now() - started)) * 1000).toFixed(0)} req/s)`);
      }
    }
  }
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const seconds = (Date.now() - started) / 1000;
  const end = exited === null ? rss() : NaN;
  if (marks.at(-1).at !== done) marks.push({ at: done, rssMiB: end });
  log(`RSS at the end: ${exited === null ? `${end.toFixed(1)} MiB` : `the server exited (${exited})`}; peak sampled ${peak.toFixed(1)} MiB`);
  log(`${done} requests in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);

  const warm = marks.find((m) => m.at >= EVERY);
  const checks = [
    { name: "the server stayed up", met: exited === null, detail: exited === null ? "yes" : `exited ${exited}` },
    { name: `all ${TOTAL} requests answered 401 invalid_client`, met: done === TOTAL && unexpected === 0, detail: `${done} answered, ${unexpected} otherwise` },
    {
      name: `flat: no RSS sample after the ${EVERY} mark more than ${FLAT_MIB} MiB above it`,
      met: warm !== undefined && exited === null && Math.max(peakAfterWarmUp, end) - warm.rssMiB <= FLAT_MIB,
      detail: warm ? `${warm.rssMiB.toFixed(1)} MiB at ${EVERY}, highest after ${Math.max(peakAfterWarmUp, end).toFixed(1)} MiB, end ${Number.isNaN(end) ? "-" : end.toFixed(1)} MiB` : "never reached",
    },
  ];
  for (const c of checks) console.log(`  ${c.met ? "PASS" : "FAIL"}  ${c.name}: ${c.detail}`);
  console.log(`RESULT ${checks.every((c) => c.met) ? "PASS" : "FAIL"}`);
  if (!checks.every((c) => c.met)) process.exitCode = 1;
}

try {
  await main();
} catch (error) {
  console.error(`[flood] ${error.stack ?? error.message}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
