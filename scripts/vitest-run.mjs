#!/usr/bin/env node
// `vitest run`, once more if the run dies of V8's wasm code-registry crash.
//
// Node 22–26 can abort with `Check failed: jit_page_->allocations_.erase(addr) == 1`
// (ThreadIsolation, wasm code) when many PGlite instances are created and freed in one process:
// nodejs/node#64500, electric-sql/pglite#1053. The embedded-database test run does exactly that
// (a fresh in-memory PGlite per test file, in worker threads), about once in five full runs. It is
// not a test failure: nothing was asserted when the process aborted. Only that crash, recognised by
// its message, gets one more run; any other failure is reported as is.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const vitest = fileURLToPath(new URL("../node_modules/vitest/vitest.mjs", import.meta.url));
const args = ["run", ...process.argv.slice(2)];
const V8_WASM_CRASH = /jit_page_->allocations_\.erase|UnregisterWasmAllocation/;

function run() {
  return new Promise((resolve) => {
    const env = process.stdout.isTTY ? { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? "1" } : process.env;
    const child = spawn(process.execPath, [vitest, ...args], { stdio: ["inherit", "pipe", "pipe"], env });
    let tail = "";
    const keep = (chunk) => {
      tail = (tail + chunk.toString()).slice(-256 * 1024);
    };
    child.stdout.on("data", (chunk) => {
      process.stdout.write(chunk);
      keep(chunk);
    });
    child.stderr.on("data", (chunk) => {
      process.stderr.write(chunk);
      keep(chunk);
    });
    child.on("close", (code, signal) => resolve({ code: code ?? 1, signal, crashed: V8_WASM_CRASH.test(tail) }));
  });
}

let result = await run();
if (result.code !== 0 && result.crashed) {
  console.error("\n[test] The run was aborted by V8's wasm code-registry crash (nodejs/node#64500), not by a test: running it once more.\n");
  result = await run();
}
process.exit(result.code);
