// Summaries of a V8 CPU profile (.cpuprofile, from `node --cpu-prof`; for the server under load:
// BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" node bench/run.mjs -s session ...).
//
//   node bench/profile/cpu.mjs self FILE [N]             self time by package/file, then by function
//   node bench/profile/cpu.mjs inclusive FILE [N] [RE]   inclusive time by function (each sample once per function)
//   node bench/profile/cpu.mjs callers FILE RE [DEPTH]   where the time under functions matching RE comes from
//
// Percentages are of the profile's whole wall time, idle included (the `(idle)` row).
// LAST_SECONDS=12 keeps only the profile's last 12 seconds: the last scenario's measured window
// (the profile covers start-up and every scenario before it).
import fs from "node:fs";
import { pathToFileURL } from "node:url";

/** The profile's nodes by id, each node's parent, and its self time (µs). */
export function readProfile(profile) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map();
  let total = 0;
  const last = Number(process.env.LAST_SECONDS ?? 0) * 1e6;
  const from = last > 0 ? profile.endTime - last : -Infinity;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const d = profile.timeDeltas[i] ?? 0;
    at += d;
    if (at < from) continue;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + d);
    total += d;
  }
  return { nodes, parent, self, total };
}

/** A package name for frames in node_modules, else the path inside the checkout. */
export const placeOf = (url) =>
  url.replace(/^file:\/\//, "").replace(/.*node_modules\/((@[^/]+\/)?[^/]+).*/, "pkg:$1").replace(`${process.cwd()}/`, "");
export const frameName = (n) => `${n.callFrame.functionName || "(anon)"} ${placeOf(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;

function top(map, total, n) {
  return [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, t]) => `${((t / total) * 100).toFixed(1).padStart(5)}% ${k}`);
}

export function selfTime(profile, n = 40) {
  const { nodes, self, total } = readProfile(profile);
  const byPlace = new Map();
  const byFrame = new Map();
  for (const [id, t] of self) {
    const node = nodes.get(id);
    const place = placeOf(node.callFrame.url) || node.callFrame.functionName;
    byPlace.set(place, (byPlace.get(place) ?? 0) + t);
    byFrame.set(frameName(node), (byFrame.get(frameName(node)) ?? 0) + t);
  }
  return ["--- by package or file", ...top(byPlace, total, n), "--- by function", ...top(byFrame, total, n)];
}

export function inclusiveTime(profile, n = 40, pattern = null) {
  const { nodes, parent, self, total } = readProfile(profile);
  const incl = new Map();
  for (const [id, t] of self) {
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const k = frameName(nodes.get(cur));
      if (seen.has(k)) continue;
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + t);
    }
  }
  return top(new Map([...incl].filter(([k]) => !pattern || pattern.test(k))), total, n);
}

export function callers(profile, pattern, depth = 4) {
  const { nodes, parent, self, total } = readProfile(profile);
  const chains = new Map();
  for (const [id, t] of self) {
    // The outermost frame matching the pattern, then its callers.
    let hit;
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) if (pattern.test(frameName(nodes.get(cur)))) hit = cur;
    if (hit === undefined) continue;
    const chain = [];
    for (let c = hit; c !== undefined && chain.length < depth; c = parent.get(c)) chain.push(frameName(nodes.get(c)));
    chains.set(chain.join(" < "), (chains.get(chain.join(" < ")) ?? 0) + t);
  }
  return top(chains, total, 25);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [mode, file, a, b] = process.argv.slice(2);
  if (!file || !["self", "inclusive", "callers"].includes(mode)) {
    console.error("usage: node bench/profile/cpu.mjs self|inclusive|callers FILE [...]");
    process.exit(2);
  }
  const profile = JSON.parse(fs.readFileSync(file, "utf8"));
  const lines =
    mode === "self" ? selfTime(profile, Number(a ?? 40)) : mode === "inclusive" ? inclusiveTime(profile, Number(a ?? 40), b ? new RegExp(b) : null) : callers(profile, new RegExp(a), Number(b ?? 4));
  console.log(lines.join("\n"));
}
