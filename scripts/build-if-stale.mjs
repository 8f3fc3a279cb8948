#!/usr/bin/env node
// The production build unless it is current: `next build` when .next/BUILD_ID is missing or older
// than what Next reads, then the compiled server (scripts/build-server.mjs) when it is missing or
// older than what it reads (the same, and server.ts). The one staleness rule of `npm start`, `npm test` (the dispatch tests
// and the e2e suite need the build), the e2e server and `npm run bench`. REBUILD=1 forces a build.
//
// Waits first for a `next build` of this checkout that someone else is running: two builds
// writing one .next directory break each other.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { buildServer, SERVER_BUNDLE } from "./build-server.mjs";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** What `next build` reads. */
const NEXT_SOURCES = ["app", "components", "lib", "db", "public", "next.config.ts", "proxy.ts", "package.json", "package-lock.json", "tsconfig.json", "postcss.config.mjs"];
/** What the compiled server reads besides: its entry (its modules and packages are among the above). */
const SERVER_ENTRY_SOURCE = "server.ts";

function newest(entry) {
  if (!existsSync(entry)) return 0;
  const stats = statSync(entry);
  if (!stats.isDirectory()) return entry.endsWith(".test.ts") ? 0 : stats.mtimeMs;
  let latest = stats.mtimeMs; // a directory's mtime catches deletions and renames
  for (const name of readdirSync(entry)) {
    if (name === "node_modules") continue;
    latest = Math.max(latest, newest(path.join(entry, name)));
  }
  return latest;
}

const mtime = (file) => (existsSync(file) ? statSync(file).mtimeMs : 0);

/** Which parts of the production build are older than their sources (one walk of the sources). */
function stale() {
  const nextSources = Math.max(...NEXT_SOURCES.map((s) => newest(path.join(root, s))));
  const serverSources = Math.max(nextSources, newest(path.join(root, SERVER_ENTRY_SOURCE)));
  return { next: mtime(path.join(root, ".next", "BUILD_ID")) <= nextSources, server: mtime(path.join(root, SERVER_BUNDLE)) <= serverSources };
}

/** The production build exists: .next/BUILD_ID and the compiled server are newer than their sources. */
export function buildIsCurrent() {
  const { next, server } = stale();
  return !next && !server;
}

/** A `next build` of this checkout run by another process (its working directory is ours). */
function otherBuildRunning() {
  const r = spawnSync("pgrep", ["-f", "next build|next-build"], { encoding: "utf8" });
  if (r.status !== 0) return false;
  const here = realpathSync(root);
  return r.stdout
    .trim()
    .split("\n")
    .map(Number)
    .some((pid) => {
      if (!pid || pid === process.pid) return false;
      try {
        return realpathSync(`/proc/${pid}/cwd`) === here;
      } catch {
        return false;
      }
    });
}

/** Runs `next build`; its output is the terminal's, or kept and shown only if it fails (`quiet`). */
function nextBuild({ quiet, onChild }) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, "node_modules", "next", "dist", "bin", "next"), "build"], {
      cwd: root,
      stdio: ["ignore", quiet ? "pipe" : "inherit", quiet ? "pipe" : "inherit"],
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
    });
    onChild?.(child);
    const output = [];
    child.stdout?.on("data", (chunk) => output.push(chunk));
    child.stderr?.on("data", (chunk) => output.push(chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (code === 0) return resolve();
      if (quiet) process.stdout.write(Buffer.concat(output));
      reject(new Error(`next build failed (${signal ?? `exit ${code}`})`));
    });
  });
}

/**
 * Builds what is stale: `next build` when .next/BUILD_ID is older than what Next reads, the
 * compiled server when it is older than what it reads. `quiet` keeps Next's output (its route
 * table) out of the way unless the build fails, as `npm start` shows it; `onChild` is given the
 * build's process (the e2e server stops it on a signal). The build runs beside the event loop, so
 * a caller can go on answering meanwhile.
 */
export async function ensureBuild({ log = (m) => console.log(`[build] ${m}`), force = process.env.REBUILD === "1", quiet = false, onChild } = {}) {
  for (let waited = 0; otherBuildRunning(); waited += 5) {
    if (waited % 60 === 0) log("another `next build` of this checkout is running; waiting for it");
    await sleep(5000);
  }
  const { next, server } = force ? { next: true, server: true } : stale();
  if (!next && !server) return log("the production build is current (.next/BUILD_ID and the compiled server are newer than the sources)");
  if (next) {
    log("next build");
    await nextBuild({ quiet, onChild });
  }
  log(`compiling the server (${SERVER_BUNDLE})`);
  await buildServer();
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  ensureBuild().catch((error) => {
    console.error(`[build] ${error.message}`);
    process.exit(1);
  });
}
