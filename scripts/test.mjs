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
 * The e2e phase runs the whole Playwright suite on PostgreSQL, the production target, but for the
 * first start on a fresh embedded data directory, which the embedded run covers. On the embedded
 * database it runs the specs of the embedded path (EMBEDDED_PATH_SPECS in playwright.config.ts:
 * the first start, the demo sign-in, the console setup); E2E_ALL=1 runs every spec there too, and
 * `npm run test:e2e` always runs them all.
 *
 * So `.ci/run`, which runs `npm test` once per database, type-checks, lints and builds once in
 * effect: the second run finds the caches and the build current.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name) => path.join(root, "node_modules", ".bin", name);
const cache = (name) => path.join(root, "node_modules", ".cache", name);
const database = process.env.DATABASE_URL ? "PostgreSQL" : "embedded";
const e2eScope = database === "embedded" && process.env.E2E_ALL !== "1" ? "embedded" : "all";

// The build first: it writes the route types (.next/types) that the type check includes, so a
// second run's incremental type check finds nothing new.
const phases = [
  ["build", [[process.execPath, "scripts/build-if-stale.mjs"]]],
  ["typecheck", [[bin("tsc"), "--noEmit"]]],
  [
    "lint",
    [
      [bin("eslint"), ".", "--cache", "--cache-location", cache("eslint/")],
      [bin("depcruise"), "lib", "components", "app", "--config", ".dependency-cruiser.cjs", "--cache", cache("dependency-cruiser")],
    ],
  ],
  ["unit", [[bin("vitest"), "run"]]],
  ["e2e", [[bin("playwright"), "test"]]],
];

const times = [];
const started = Date.now();
const seconds = (ms) => `${Math.round(ms / 1000)} s`;

function summary(failed) {
  console.log(`\n[test] ${database} database${failed ? `: ${failed} failed` : ""}`);
  for (const [name, ms] of times) console.log(`[test]   ${name.padEnd(10)} ${seconds(ms).padStart(6)}`);
  console.log(`[test]   ${"total".padEnd(10)} ${seconds(Date.now() - started).padStart(6)}`);
}

for (const [name, commands] of phases) {
  const phaseStarted = Date.now();
  console.log(`\n[test] ${name}${name === "e2e" ? ` (${e2eScope === "embedded" ? "the embedded path's specs" : "every spec"})` : ""}`);
  for (const [command, ...args] of commands) {
    const r = spawnSync(command, args, {
      cwd: root,
      stdio: "inherit",
      env: { ...process.env, ...(name === "e2e" ? { E2E_SCOPE: e2eScope } : {}) },
    });
    if (r.status !== 0) {
      times.push([name, Date.now() - phaseStarted]);
      summary(name);
      process.exit(r.status ?? 1);
    }
  }
  times.push([name, Date.now() - phaseStarted]);
}
summary();
