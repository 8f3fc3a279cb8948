// `npm start`: build the app when there is no build or sources changed since, then run the server.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { serverNodeArgs } from "./server-command.mjs";

const root = process.cwd();
const buildId = path.join(root, ".next", "BUILD_ID");

function newest(dir) {
  let latest = 0;
  if (!existsSync(dir)) return latest;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : statSync(full).mtimeMs);
  }
  return latest;
}

const sources = Math.max(
  ...["app", "components", "lib", "db"].map((d) => newest(path.join(root, d))),
  ...["next.config.ts", "proxy.ts"].map((f) => statSync(path.join(root, f)).mtimeMs),
);
if (!existsSync(buildId) || statSync(buildId).mtimeMs < sources) {
  console.log("Building Latchkey (first start or sources changed; a few minutes on a small machine)…");
  const started = Date.now();
  // Next's output (its route table) is kept out of the way; shown in full only when the build fails.
  const build = spawnSync(process.execPath, [path.join(root, "node_modules", "next", "dist", "bin", "next"), "build"], {
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
    env: { NEXT_TELEMETRY_DISABLED: "1", ...process.env },
  });
  if (build.status !== 0) {
    process.stdout.write(build.stdout ?? "");
    process.stderr.write(build.stderr ?? "");
    console.error("The build failed (its output is above).");
    process.exit(build.status ?? 1);
  }
  console.log(`Built in ${Math.round((Date.now() - started) / 1000)} s.`);
}
// One server process (`node --import tsx server.ts`), started as the benchmark starts it.
const server = spawn(process.execPath, [...serverNodeArgs(), "server.ts", ...process.argv.slice(2)], {
  stdio: "inherit",
  env: { ...process.env, NODE_ENV: "production" },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
