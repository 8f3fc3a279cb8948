#!/usr/bin/env node
// `npx latchkey <command>`: runs cli/latchkey.ts with tsx from the package root, where the
// migrations and the default data directory live. File arguments stay relative to the
// directory the command was run from (passed on as LATCHKEY_CWD).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { constants } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const tsxCli = createRequire(import.meta.url).resolve("tsx/cli");
const env = { ...process.env, LATCHKEY_CWD: process.cwd() };
// A relative DATA_DIR means relative to where the user is, not to the package root.
if (env.DATA_DIR && !path.isAbsolute(env.DATA_DIR)) env.DATA_DIR = path.resolve(process.cwd(), env.DATA_DIR);

const child = spawn(process.execPath, [tsxCli, path.join(root, "cli", "latchkey.ts"), ...process.argv.slice(2)], {
  cwd: root,
  env,
  stdio: "inherit",
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => {
  process.exit(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1));
});
