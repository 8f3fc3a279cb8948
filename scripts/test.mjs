#!/usr/bin/env node
/**
 * `npm test`: every check on the database the environment names (DATABASE_URL, else the
 * embedded database), with each phase's wall time at the end.
 *
 *   build      the production build, skipped when it is newer than every source (scripts/build-if-stale.mjs)
 *   typecheck  tsc, incremental (tsconfig.tsbuildinfo): a second run over unchanged sources takes seconds
 *   lint       ESLint and dependency-cruiser, both with their caches under node_modules/.cache
 *   unit       vitest: unit and integration tests against a fresh database
 *   e2e        Playwright in Chromium against the production build
 *
 * After the build, two lanes run at once: typecheck and lint side by side, then unit; and e2e
 * beside them. The unit tests keep both cores busy while the browser, the e2e server and its
 * database mostly wait on each other, so the e2e phase costs little wall time of its own. Its
 * output goes to .test-data/e2e-<database>.log and is printed once the first lane is done (the
 * two would interleave line by line otherwise). TEST_SERIAL=1 runs the phases one after another.
 * A failure in one lane stops the other (Playwright is interrupted, so its server drops its
 * database).
 *
 * The e2e phase runs each Playwright spec once across the two databases: on the embedded database
 * the specs of the embedded path (EMBEDDED_PATH_SPECS in playwright.config.ts: the first start, the
 * demo sign-in, the console setup, the recipes, the workspace hostnames) and those no database
 * changes (ONCE_ON_EMBEDDED: the recipes and the page specs); on PostgreSQL, the production target,
 * every other spec. E2E_ALL=1 runs every spec on either, and `npm run test:e2e` always runs them all.
 *
 * So `.ci/run`, which runs `npm test` once per database, type-checks, lints and builds once in
 * effect: the second run finds the caches and the build current. It also fuzzes the endpoints once,
 * on PostgreSQL: FUZZ_SKIP=1 (set for its embedded run) leaves the endpoint fuzz out of unit
 * (vitest.config.ts).
 *
 * On PostgreSQL every database the run creates carries its tag (LATCHKEY_TEST_RUN, set here:
 * tests/setup/database.ts `freshDatabaseName`, e2e/serve.mjs). The test files drop theirs, and the
 * unit phase's teardown every one of the run's that is left; at its end, and when it is interrupted
 * (SIGINT, SIGTERM), the run checks that none is left: any that is, it lists, drops, and fails.
 */
import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name) => path.join(root, "node_modules", ".bin", name);
const cache = (name) => path.join(root, "node_modules", ".cache", name);
const database = process.env.DATABASE_URL ? "PostgreSQL" : "embedded";
const e2eScope = database === "embedded" && process.env.E2E_ALL !== "1" ? "embedded" : "all";
const serial = process.env.TEST_SERIAL === "1";
/** This run's tag in the names of the databases it creates (see above); a caller's own is kept. */
const runTag = (process.env.LATCHKEY_TEST_RUN ??= `${Date.now()}x${randomBytes(2).toString("hex")}`);

// The build first: it writes the route types (.next/types) that the type check includes, so a
// second run's incremental type check finds nothing new; and the e2e server serves it.
const BUILD = ["build", [[process.execPath, "scripts/build-if-stale.mjs"]]];
const CHECKS = [
  ["typecheck", [[bin("tsc"), "--noEmit"]]],
  [
    "lint",
    [
      [bin("eslint"), ".", "--cache", "--cache-location", cache("eslint/")],
      [bin("depcruise"), "lib", "components", "app", "--config", ".dependency-cruiser.cjs", "--cache", cache("dependency-cruiser")],
    ],
  ],
  ["unit", [[bin("vitest"), "run"]]],
];
const E2E = ["e2e", [[bin("playwright"), "test"]]];

/**
 * Node's on-disk cache of compiled modules, shared by every process of the run and kept for the
 * next (tsc, ESLint, Next, vitest's workers, Playwright, the e2e server): a second run, such as
 * `.ci/run`'s on PostgreSQL after the embedded one, skips compiling the packages' code again.
 * Node checks each entry against the file's contents, so a stale entry is never used.
 */
const COMPILE_CACHE = process.env.NODE_COMPILE_CACHE ? {} : { NODE_COMPILE_CACHE: cache("node-compile") };

const times = new Map();
const started = Date.now();
const seconds = (ms) => `${Math.round(ms / 1000)} s`;
const running = new Set();

function summary(failed) {
  console.log(`\n[test] ${database} database${failed ? `: ${failed} failed` : ""}${serial ? "" : " (e2e beside typecheck, lint and unit)"}`);
  for (const [name, ms] of times) console.log(`[test]   ${name.padEnd(10)} ${seconds(ms).padStart(6)}`);
  console.log(`[test]   ${"total".padEnd(10)} ${seconds(Date.now() - started).padStart(6)}`);
}

/** Runs one command; its output goes to the terminal, or to `log` (a write stream) when given. */
function run([command, ...args], env, log) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...COMPILE_CACHE, ...env }, stdio: log ? ["ignore", "pipe", "pipe"] : "inherit" });
    running.add(child);
    if (log) {
      child.stdout.pipe(log, { end: false });
      child.stderr.pipe(log, { end: false });
    }
    child.on("close", (code, signal) => {
      running.delete(child);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

/** Runs phases one after another; resolves to the name of the first that failed, or null. */
async function lane(phases, log) {
  for (const [name, commands] of phases) {
    if (stopped) return null;
    const phaseStarted = Date.now();
    const say = (line) => (log ? log.write(`${line}\n`) : console.log(line));
    say(`\n[test] ${name}${name === "e2e" ? ` (${e2eScope === "embedded" ? "the embedded path's specs" : "every spec"})` : ""}`);
    for (const command of commands) {
      const status = await run(command, name === "e2e" ? { E2E_SCOPE: e2eScope } : {}, log);
      if (status !== 0) {
        times.set(name, Date.now() - phaseStarted);
        return stopped ? null : name;
      }
    }
    times.set(name, Date.now() - phaseStarted);
  }
  return null;
}

let stopped = false;
/** Stops the other lane: SIGINT, which Playwright answers by closing its web server (and its database). */
function stopOthers() {
  stopped = true;
  for (const child of running) child.kill("SIGINT");
}

let interrupted = null;
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    // The lanes stop (their processes get SIGINT and drop what they made); the end check still runs.
    interrupted = signal;
    stopOthers();
  });
}

/**
 * The databases of this run still on the PostgreSQL server at its end: each listed and dropped,
 * and the run failed. Returns whether any was left (or the server could not be asked).
 */
async function leftDatabases() {
  if (database !== "PostgreSQL") return false;
  const { default: postgres } = await import("postgres");
  const sql = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    const rows = await sql`select datname from pg_database where position(${`_${runTag}_`} in datname) > 0 order by datname`;
    if (rows.length === 0) {
      console.log(`\n[test] no database of this run (tag ${runTag}) is left on the PostgreSQL server`);
      return false;
    }
    console.error(`\n[test] FAILED: ${rows.length} database(s) of this run (tag ${runTag}) left on the PostgreSQL server; dropping them:`);
    for (const { datname } of rows) {
      console.error(`[test]   ${datname}`);
      await sql.unsafe(`drop database if exists "${datname.replaceAll('"', '""')}" with (force)`);
    }
    return true;
  } catch (error) {
    console.error(`\n[test] FAILED: could not list this run's databases on the PostgreSQL server: ${error.message}`);
    return true;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

let failed = await lane([BUILD]);
if (!failed && serial) failed = await lane([...CHECKS, E2E]);
else if (!failed) {
  const logFile = path.join(root, ".test-data", `e2e-${database === "embedded" ? "embedded" : "postgres"}.log`);
  mkdirSync(path.dirname(logFile), { recursive: true });
  const log = createWriteStream(logFile);
  console.log(`\n[test] e2e runs beside the checks; its output: ${path.relative(root, logFile)} (printed below when done)`);
  const e2e = lane([E2E], log).then((name) => {
    if (name) stopOthers();
    return name;
  });
  // The type check and the lint side by side (each keeps one core busy), then the unit tests.
  const [typecheck, lint, unit] = CHECKS;
  const first = await Promise.all([lane([typecheck]), lane([lint])]);
  const checks = first.find(Boolean) ?? (await lane([unit]));
  if (checks) stopOthers();
  const e2eFailed = await e2e;
  await new Promise((resolve) => log.end(resolve));
  console.log(`\n[test] e2e output (${path.relative(root, logFile)}):`);
  process.stdout.write(readFileSync(logFile));
  failed = checks ?? e2eFailed;
}
if (interrupted) failed ??= `interrupted (${interrupted})`;
if (await leftDatabases()) failed ??= "databases left";
summary(failed);
process.exit(interrupted ? 130 : failed ? 1 : 0);
