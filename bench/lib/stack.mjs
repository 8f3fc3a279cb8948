// The pieces the benchmark stands up and tears down: the build, a throwaway database, the
// production server, the calibration baseline.
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import postgres from "postgres";
import { ensureBuild as ensureStaleBuild, root } from "../../scripts/build-if-stale.mjs";

export { root };

/**
 * `next build` unless BENCH_SKIP_BUILD=1 or the build is current (scripts/build-if-stale.mjs:
 * .next/BUILD_ID newer than the sources; BENCH_REBUILD=1 forces it).
 */
export async function ensureBuild(log) {
  if (process.env.BENCH_SKIP_BUILD === "1") {
    if (!existsSync(path.join(root, ".next", "BUILD_ID"))) throw new Error("BENCH_SKIP_BUILD=1 but there is no build (.next/BUILD_ID)");
    return log("BENCH_SKIP_BUILD=1: using the existing build");
  }
  await ensureStaleBuild({ log, force: process.env.BENCH_REBUILD === "1" });
}

const admin = (url) => postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });

/**
 * The database to run against: DATABASE_URL as given (never dropped), or a throwaway
 * `latchkey_bench_<ts>` on the local server, dropped by `drop()`.
 */
export async function openDatabaseTarget(log) {
  if (process.env.DATABASE_URL) {
    log(`using DATABASE_URL as given (not dropped at the end)`);
    return { url: process.env.DATABASE_URL, drop: async () => {} };
  }
  const serverUrl = process.env.BENCH_PG_SERVER ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const name = `latchkey_bench_${new Date().toISOString().replace(/\D/g, "").slice(0, 14)}`;
  const sql = admin(serverUrl);
  try {
    await sql.unsafe(`create database "${name}"`);
  } finally {
    await sql.end({ timeout: 5 });
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  log(`throwaway database ${name}`);
  let dropped = false;
  return {
    url: url.toString(),
    name,
    drop: async () => {
      if (dropped) return;
      dropped = true;
      const s = admin(serverUrl);
      try {
        await s.unsafe(`drop database if exists "${name}" with (force)`);
        log(`dropped database ${name}`);
      } finally {
        await s.end({ timeout: 5 });
      }
    },
  };
}

/** Runs a command to completion; rejects on a non-zero exit. */
export function run(command, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] });
    child.on("error", reject);
    child.on("exit", (code, signal) => (code === 0 ? resolve() : reject(new Error(`${args.join(" ")} exited ${code ?? signal}`))));
  });
}

/**
 * A child process whose output goes to this process's stderr with a prefix; `stop()` ends it by
 * pid. `stdoutFile`: its stdout goes to that file instead (the server's request log: read by no
 * JavaScript here, so forwarding it costs the measurement nothing).
 */
export function startProcess(label, args, env, { stdoutFile } = {}) {
  const out = stdoutFile ? openSync(stdoutFile, "w") : "pipe";
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ["ignore", out, "pipe"] });
  if (typeof out === "number") closeSync(out);
  const prefix = (chunk) =>
    chunk
      .toString()
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => `  [${label}] ${l}\n`)
      .join("");
  child.stdout?.on("data", (c) => process.stderr.write(prefix(c)));
  child.stderr.on("data", (c) => process.stderr.write(prefix(c)));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal)));
  return {
    pid: child.pid,
    child,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Polls `url` until it answers 200, the process exits, or `ms` pass. */
export async function waitReady(url, proc, ms = 90_000) {
  const deadline = Date.now() + ms;
  let exitedWith;
  proc.exited.then((c) => (exitedWith = c));
  while (Date.now() < deadline) {
    if (exitedWith !== undefined) throw new Error(`the server exited (${exitedWith}) before it was ready`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      /* not listening yet */
    }
    await sleep(250);
  }
  throw new Error(`timed out waiting for ${url}`);
}

export function gitCommit() {
  const head = spawnSync("git", ["rev-parse", "--short=12", "HEAD"], { cwd: root, encoding: "utf8" }).stdout.trim();
  const dirty = spawnSync("git", ["status", "--porcelain", "--untracked-files=no", "--", "lib", "app", "db", "server.ts", "components"], { cwd: root, encoding: "utf8" }).stdout.trim();
  return { commit: head || "unknown", dirty: dirty !== "" };
}
