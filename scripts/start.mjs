// `npm start`: check the Node.js version (scripts/node-version.mjs), build the app when there is no
// build or sources changed since (scripts/build-if-stale.mjs), then run the compiled server
// (scripts/server-command.mjs). The rest is imported only once the version is known to be enough.
import { nodeVersionProblem } from "./node-version.mjs";

const tooOld = nodeVersionProblem(process.versions.node);
if (tooOld) {
  console.error(tooOld);
  process.exit(1);
}
const { spawn } = await import("node:child_process");
const { buildIsCurrent, ensureBuild } = await import("./build-if-stale.mjs");
const { SERVER_ENTRY, serverNodeArgs } = await import("./server-command.mjs");

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
