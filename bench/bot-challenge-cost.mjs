#!/usr/bin/env node
// What the sign-in's proof of work (lib/authn/bot-challenge) costs, in numbers (docs/performance.md):
//
//   node --import tsx bench/bot-challenge-cost.mjs            # 40 challenges; Chromium at 1× and 4× CPU throttling
//   node --import tsx bench/bot-challenge-cost.mjs -n 100 --throttle 6
//
// - An attacker's side: hashes tried per solved challenge (half the range on average), and the time
//   one core takes, with the page's own solver in Node (a midstate and no allocation per try: faster
//   than Node's native createHash per try) and with createHash. Hand-written SIMD code does better
//   still; a proof of work prices each attempt, it does not stop a determined attacker.
// - The server's side: checking a solution (the one hash and the HMAC; the claim's insert is not
//   counted here).
// - A user's side: the page's own solver (components/hosted/sha256.ts, as components/hosted/bot-challenge.tsx
//   runs it) in Debian's Chromium, without and with CPU throttling (Chrome's DevTools rate 4 is
//   the usual stand-in for a mid-range phone); median and 95th percentile.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { chromium } from "playwright-core";
import { createChallenge, verifySolution } from "altcha-lib/v1";

const { values: opts } = parseArgs({ options: { n: { type: "string", short: "n", default: "40" }, throttle: { type: "string", default: "4" } } });
const N = Number(opts.n);
const THROTTLE = Number(opts.throttle);
const { BOT_CHALLENGE_MAX_NUMBER } = await import("../lib/authn/bot-challenge/challenge.ts");
const { findNumber } = await import("../components/hosted/sha256.ts");
const hmacKey = "bench-key";
const challenges = [];
for (let i = 0; i < N; i++) challenges.push(await createChallenge({ algorithm: "SHA-256", hmacKey, maxNumber: BOT_CHALLENGE_MAX_NUMBER, expires: new Date(Date.now() + 600_000), params: { tx: `bench-${i}` } }));

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const fmt = (ms) => `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;

// The attacker's cheapest: native SHA-256 on one core.
const tries = [];
const native = [];
const solver = [];
const payloads = [];
for (const c of challenges) {
  let t = performance.now();
  let n = 0;
  while (createHash("sha256").update(c.salt + n).digest("hex") !== c.challenge) n++;
  native.push(performance.now() - t);
  t = performance.now();
  if (findNumber(c.salt, c.challenge, 0, c.maxnumber) !== n) throw new Error("the solvers disagree");
  solver.push(performance.now() - t);
  tries.push(n + 1);
  payloads.push(Buffer.from(JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: n, salt: c.salt, signature: c.signature })).toString("base64"));
}
const checks = [];
for (const p of payloads) {
  const t = performance.now();
  if (!(await verifySolution(p, hmacKey, false))) throw new Error("a solution did not verify");
  checks.push(performance.now() - t);
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(`range ${BOT_CHALLENGE_MAX_NUMBER}; ${N} challenges`);
console.log(`attacker: ${Math.round(mean(tries)).toLocaleString("en")} hashes per solved challenge on average; one core: the page's solver median ${fmt(pct(solver, 50))} (p95 ${fmt(pct(solver, 95))}), createHash per try median ${fmt(pct(native, 50))}`);
console.log(`server:   checking a solution: median ${(pct(checks, 50) * 1000).toFixed(0)} µs`);

// The user's: the page's solver in Chromium.
const bundle = await build({
  stdin: { contents: `import { findNumber } from "./components/hosted/sha256.ts"; globalThis.findNumber = findNumber;`, resolveDir: process.cwd(), loader: "ts" },
  bundle: true,
  write: false,
  format: "iife",
  logLevel: "silent",
}).catch(() => null);
const executablePath = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
if (!bundle || !executablePath) {
  console.log("user: skipped (no Chromium or the solver did not bundle)");
  process.exit(0);
}
const code = bundle.outputFiles[0].text;
const browser = await chromium.launch({ executablePath, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
try {
  for (const rate of [1, THROTTLE]) {
    const page = await browser.newPage();
    await page.setContent("<!doctype html><title>solver</title>");
    await page.addScriptTag({ content: code });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Emulation.setCPUThrottlingRate", { rate });
    const times = await page.evaluate((cs) => {
      const out = [];
      for (const c of cs) {
        const t = performance.now();
        // As the page does (it searches in slices of 20,000 and yields between them; the yields are left out here).
        if (globalThis.findNumber(c.salt, c.challenge, 0, c.maxnumber) === null) throw new Error("no solution");
        out.push(performance.now() - t);
      }
      return out;
    }, challenges.slice(0, Math.min(N, 20)));
    console.log(`user, Chromium at ${rate}× CPU: median ${fmt(pct(times, 50))}, p95 ${fmt(pct(times, 95))}`);
    await page.close();
  }
} finally {
  await browser.close();
}
