/**
 * bench/profile: the summaries of a CPU profile and a sampling heap profile, on small profiles
 * whose answers are known, so a change to their arithmetic cannot go unnoticed.
 */
import { describe, expect, it } from "vitest";
// @ts-expect-error: plain JavaScript tools without type declarations
import { callers, inclusiveTime, selfTime } from "../../bench/profile/cpu.mjs";
// @ts-expect-error: plain JavaScript tools without type declarations
import { allocations } from "../../bench/profile/heap.mjs";

const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0, columnNumber: 0, scriptId: "0" });

// root → handler (app.js) → query (node_modules/postgres) → write (native); root → (idle)
const cpuProfile = {
  nodes: [
    { id: 1, callFrame: frame("(root)", ""), children: [2, 5] },
    { id: 2, callFrame: frame("handler", "file:///srv/app.js"), children: [3] },
    { id: 3, callFrame: frame("query", "file:///srv/node_modules/postgres/src/index.js"), children: [4] },
    { id: 4, callFrame: frame("write", ""), children: [] },
    { id: 5, callFrame: frame("(idle)", ""), children: [] },
  ],
  // 10 µs each: handler 1 sample, query 2, write 3, idle 4.
  samples: [2, 3, 3, 4, 4, 4, 5, 5, 5, 5],
  timeDeltas: Array(10).fill(10),
};

describe("bench/profile/cpu.mjs", () => {
  it("gives self time by package and by function, as shares of the whole", () => {
    const lines: string[] = selfTime(cpuProfile, 10);
    expect(lines).toContain(" 20.0% pkg:postgres");
    expect(lines).toContain(" 40.0% (idle) :1");
    expect(lines).toContain(" 30.0% write :1");
  });

  it("counts a sample once for every function on its stack", () => {
    const lines: string[] = inclusiveTime(cpuProfile, 10, /handler|query/);
    expect(lines).toEqual([" 60.0% handler /srv/app.js:1", " 50.0% query pkg:postgres:1"]);
  });

  it("says which callers the time under a function comes from", () => {
    expect(callers(cpuProfile, /^query /, 2)).toEqual([" 50.0% query pkg:postgres:1 < handler /srv/app.js:1"]);
  });
});

describe("bench/profile/heap.mjs", () => {
  it("sums the sampled bytes by allocating function and by stack", () => {
    const node = (name: string, selfSize: number, children: object[] = []) => ({ callFrame: frame(name, "file:///srv/app.js"), selfSize, children });
    const profile = { head: node("(root)", 0, [node("handler", 100, [node("build", 300)]), node("log", 600)]) };
    const lines: string[] = allocations(profile, 5);
    expect(lines[0]).toBe("sampled 0.0 MB");
    expect(lines).toContain(" 60.0% log /srv/app.js:1");
    expect(lines).toContain(" 30.0% build /srv/app.js:1 < handler /srv/app.js:1 < (root) /srv/app.js:1");
  });
});
