// CPU and memory figures from /proc (Linux): per process tree, in % of one core.
import { readdirSync, readFileSync } from "node:fs";

const CLK_TCK = 100;

function readStat(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const close = stat.lastIndexOf(")");
  const comm = stat.slice(stat.indexOf("(") + 1, close);
  const rest = stat.slice(close + 2).split(" ");
  return { comm, ppid: Number(rest[1]), ticks: Number(rest[11]) + Number(rest[12]) };
}

function processTable() {
  const table = new Map();
  let pids = [];
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return table;
  }
  for (const p of pids) {
    try {
      table.set(Number(p), readStat(p));
    } catch {
      /* the process went away */
    }
  }
  return table;
}

/** utime + stime (clock ticks) of `root` and all its descendants; undefined when it is gone. */
export function treeTicks(root, table = processTable()) {
  if (!root || !table.has(root)) return undefined;
  const children = new Map();
  for (const [pid, { ppid }] of table) {
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(pid);
  }
  let total = 0;
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop();
    total += table.get(pid)?.ticks ?? 0;
    for (const c of children.get(pid) ?? []) stack.push(c);
  }
  return total;
}

/** The PostgreSQL postmaster on this machine (a `postgres` process whose parent is not one), if any. */
export function findPostmaster() {
  const table = processTable();
  for (const [pid, { comm, ppid }] of table) {
    if (comm === "postgres" && table.get(ppid)?.comm !== "postgres") return pid;
  }
  return undefined;
}

/** A CPU snapshot of the named process trees plus this process. */
export function cpuSnapshot(watch) {
  const table = processTable();
  const trees = {};
  for (const [name, pid] of Object.entries(watch)) trees[name] = treeTicks(pid, table);
  return { t: process.hrtime.bigint(), self: process.cpuUsage(), trees };
}

/** % of one core used between two snapshots, per tree, and by this process (`runner`: autocannon). */
export function cpuDelta(a, b) {
  const wall = Number(b.t - a.t) / 1e9;
  const out = { runner: ((b.self.user + b.self.system - a.self.user - a.self.system) / 1e6 / wall) * 100 };
  for (const name of Object.keys(a.trees)) {
    const x = a.trees[name];
    const y = b.trees[name];
    out[name] = x === undefined || y === undefined ? undefined : ((y - x) / CLK_TCK / wall) * 100;
  }
  return out;
}

/** VmHWM (peak resident set) and VmRSS of one process, in MiB. */
export function memory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
    return { peakMiB: kb("VmHWM") / 1024, rssMiB: kb("VmRSS") / 1024 };
  } catch {
    return { peakMiB: NaN, rssMiB: NaN };
  }
}
