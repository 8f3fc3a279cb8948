#!/usr/bin/env node
// The production build unless it is current: `next build` when .next/BUILD_ID is missing or older
// than a source file, then the compiled server (scripts/build-server.mjs) when it is missing or
// older than a source file. The one staleness rule of `npm start`, `npm test` (the dispatch tests
// and the e2e suite need the build), the e2e server and `npm run bench`. REBUILD=1 forces a build.
//
// Waits first for a `next build` of this checkout that someone else is running: two builds
// writing one .next directory break each other.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { buildServer, SERVER_BUNDLE } from "./build-server.mjs";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const SOURCES = ["app", "components", "lib", "db", "public", "server.ts", "next.config.ts", "proxy.ts", "package.json", "package-lock.json", "tsconfig.json", "postcss.config.mjs"];

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

const newerThanSources = (file) => existsSync(file) && statSync(file).mtimeMs > Math.max(...SOURCES.map((s) => newest(path.join(root, s))));

/** The production build exists: .next/BUILD_ID and the compiled server are newer than every source file. */
export function buildIsCurrent() {
  return newerThanSources(path.join(root, ".next", "BUILD_ID")) && newerThanSources(path.join(root, SERVER_BUNDLE));
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

/**
 * Builds what is stale. `quiet` keeps Next's output (its route table) out of the way unless the
 * build fails, as `npm start` shows it.
 */
export async function ensureBuild({ log = (m) => console.log(`[build] ${m}`), force = process.env.REBUILD === "1", quiet = false } = {}) {
  for (let waited = 0; otherBuildRunning(); waited += 5) {
    if (waited % 60 === 0) log("another `next build` of this checkout is running; waiting for it");
    await sleep(5000);
  }
  if (!force && buildIsCurrent()) return log("the production build is current (.next/BUILD_ID and the compiled server are newer than the sources)");
  if (force || !newerThanSources(path.join(root, ".next", "BUILD_ID"))) {
    log("next build");
    const r = spawnSync(process.execPath, [path.join(root, "node_modules", "next", "dist", "bin", "next"), "build"], {
      cwd: root,
      stdio: ["ignore", quiet ? "pipe" : "inherit", quiet ? "pipe" : "inherit"],
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
    });
    if (r.status !== 0) {
      // Shown in full only when it fails, when quiet.
      if (quiet) process.stdout.write(`${r.stdout ?? ""}${r.stderr ?? ""}`);
      throw new Error(`next build failed (exit ${r.status})`);
    }
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
