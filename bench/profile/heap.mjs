// Summary of a sampling heap profile (bench/profile/heap-sampling.mjs): bytes by allocating
// function, then by its callers.   node bench/profile/heap.mjs FILE [N]
import fs from "node:fs";
import { pathToFileURL } from "node:url";
import { placeOf } from "./cpu.mjs";

export function allocations(profile, n = 25) {
  const byFrame = new Map();
  const byStack = new Map();
  let total = 0;
  const walk = (node, stack) => {
    const cf = node.callFrame;
    const name = `${cf.functionName || "(anon)"} ${placeOf(cf.url)}:${cf.lineNumber + 1}`;
    const here = [name, ...stack].slice(0, 5);
    total += node.selfSize;
    byFrame.set(name, (byFrame.get(name) ?? 0) + node.selfSize);
    if (node.selfSize) byStack.set(here.join(" < "), (byStack.get(here.join(" < ")) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child, here);
  };
  walk(profile.head, []);
  const top = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)}% ${k}`);
  return [`sampled ${(total / 1e6).toFixed(1)} MB`, "--- by function", ...top(byFrame), "--- by stack", ...top(byStack)];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (!process.argv[2]) {
    console.error("usage: node bench/profile/heap.mjs FILE [N]");
    process.exit(2);
  }
  console.log(allocations(JSON.parse(fs.readFileSync(process.argv[2], "utf8")), Number(process.argv[3] ?? 25)).join("\n"));
}
