// `npm start`: build the app when there is no build or sources changed since (scripts/build-if-stale.mjs),
// then run the compiled server (scripts/server-command.mjs).
import { spawn } from "node:child_process";
import { buildIsCurrent, ensureBuild } from "./build-if-stale.mjs";
import { SERVER_ENTRY, serverNodeArgs } from "./server-command.mjs";

if (!buildIsCurrent()) {
  console.log("Building Latchkey (first start or sources changed; a few minutes on a small machine)…");
  const started = Date.now();
  try {
    // Next's output (its route table) is kept out of the way; shown in full only when the build fails.
    await ensureBuild({ quiet: true, log: () => {} });
  } catch (error) {
    console.error(`The build failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
  console.log(`Built in ${Math.round((Date.now() - started) / 1000)} s.`);
}
const server = spawn(process.execPath, [...serverNodeArgs(), SERVER_ENTRY, ...process.argv.slice(2)], {
  stdio: "inherit",
  env: { ...process.env, NODE_ENV: "production" },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
