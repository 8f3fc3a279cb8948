#!/usr/bin/env node
/**
 * `npm run fuzz` and `npm run fuzz:release`: the endpoint fuzz (tests/fuzz) with seeds drawn here,
 * each printed with the one command that reproduces it.
 *
 *   npm run fuzz                      one seed: FUZZ_SEED, or a random one (FUZZ_SEED=random, the default)
 *   FUZZ_SEED=123 npm run fuzz        the seed 123 again: the same requests, so a failure reproduces
 *   npm run fuzz:release              the release check: FUZZ_SEEDS random seeds (default 5), one after another
 *
 * FUZZ_RUNS cases per route (default 3,000). The seed is drawn once, here, and handed to both
 * halves of the fuzz (two test files, each its own process), so the one printed is the one that
 * ran. The production build is made first when stale (scripts/build-if-stale.mjs): the fuzz
 * sends Next's paths to the real Next. Exits non-zero when any seed failed, listing them.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const release = process.argv.includes("--release");
const runs = process.env.FUZZ_RUNS || "3000";
const given = process.env.FUZZ_SEED && process.env.FUZZ_SEED !== "random" ? process.env.FUZZ_SEED : null;
const count = release && !given ? Number(process.env.FUZZ_SEEDS || 5) : 1;
if (given !== null && !/^-?\d+$/.test(given)) {
  console.error(`[fuzz] FUZZ_SEED must be an integer or "random", not ${JSON.stringify(given)}`);
  process.exit(2);
}
if (!Number.isInteger(count) || count < 1) {
  console.error(`[fuzz] FUZZ_SEEDS must be a positive integer, not ${JSON.stringify(process.env.FUZZ_SEEDS)}`);
  process.exit(2);
}

/** A seed as fast-check takes it: a 32-bit integer. */
const drawSeed = () => (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0;

function run(command, args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
    const forward = (signal) => child.kill(signal);
    process.on("SIGINT", forward).on("SIGTERM", forward);
    child.on("close", (code, signal) => {
      process.off("SIGINT", forward).off("SIGTERM", forward);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

if ((await run(process.execPath, ["scripts/build-if-stale.mjs"])) !== 0) process.exit(1);

const results = [];
for (let i = 0; i < count; i++) {
  const seed = given ?? String(drawSeed());
  const repro = `FUZZ_SEED=${seed} FUZZ_RUNS=${runs} npm run fuzz`;
  console.log(`\n[fuzz] seed ${seed}${count > 1 ? ` (${i + 1} of ${count})` : ""}, ${runs} cases per route; reproduce with: ${repro}`);
  const started = Date.now();
  const status = await run(path.join(root, "node_modules", ".bin", "vitest"), ["run", "tests/fuzz"], { FUZZ_SEED: seed, FUZZ_RUNS: runs });
  results.push({ seed, repro, ok: status === 0, seconds: Math.round((Date.now() - started) / 1000) });
  console.log(`[fuzz] seed ${seed}: ${status === 0 ? "passed" : "FAILED"} in ${results.at(-1).seconds} s`);
}

console.log(`\n[fuzz] ${results.length} seed${results.length === 1 ? "" : "s"}, ${runs} cases per route:`);
for (const r of results) console.log(`[fuzz]   ${r.ok ? "passed" : "FAILED"}  seed ${r.seed} (${r.seconds} s)${r.ok ? "" : `: ${r.repro}`}`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
