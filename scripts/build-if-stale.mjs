#!/usr/bin/env node
// `next build` unless the production build is current: .next/BUILD_ID exists and is newer than
// every source file. Used by `npm test` (the dispatch-equivalence test and the e2e suite need
// the build) and by `npm run bench`. REBUILD=1 forces a build.
//
// Waits first for a `next build` of this checkout that someone else is running: two builds
// writing one .next directory break each other.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const SOURCES = ["app", "components", "lib", "db", "public", "next.config.ts", "proxy.ts", "package.json", "package-lock.json", "tsconfig.json", "postcss.config.mjs"];

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

/** The production build exists and .next/BUILD_ID is newer than every source file. */
export function buildIsCurrent() {
  const id = path.join(root, ".next", "BUILD_ID");
  if (!existsSync(id)) return false;
  return statSync(id).mtimeMs > Math.max(...SOURCES.map((s) => newest(path.join(root, s))));
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

export async function ensureBuild({ log = (m) => console.log(`[build] ${m}`), force = process.env.REBUILD === "1" } = {}) {
  for (let waited = 0; otherBuildRunning(); waited += 5) {
    if (waited % 60 === 0) log("another `next build` of this checkout is running; waiting for it");
    await sleep(5000);
  }
  if (!force && buildIsCurrent()) return log("the production build is current (.next/BUILD_ID is newer than the sources)");
  log("next build");
  const r = spawnSync(process.execPath, [path.join(root, "node_modules", "next", "dist", "bin", "next"), "build"], {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
  });
  if (r.status !== 0) throw new Error(`next build failed (exit ${r.status})`);
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  ensureBuild().catch((error) => {
    console.error(`[build] ${error.message}`);
    process.exit(1);
  });
}
