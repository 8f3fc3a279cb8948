// Preloaded into the server (BENCH_SERVER_NODE_ARGS="--import=./bench/profile/heap-sampling.mjs"):
// after HEAP_SAMPLING_DELAY ms (default 20000: past start-up and the benchmark's seeding) samples
// every allocation for HEAP_SAMPLING_MS ms (default 12000), keeping the objects the scavenges and
// the mark-compacts freed, so the profile shows what a request allocates, not only what lives on.
// Writes /tmp/heap-sampling-<pid>.json; summarise it with `node bench/profile/heap.mjs FILE`.
// HEAP_SAMPLING_KEEP=major keeps only what the mark-compacts freed: what was promoted, then died.
import fs from "node:fs";
import inspector from "node:inspector";
import os from "node:os";
import path from "node:path";

const session = new inspector.Session();
session.connect();
const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
const onlyMajor = process.env.HEAP_SAMPLING_KEEP === "major";

setTimeout(async () => {
  await post("HeapProfiler.enable");
  await post("HeapProfiler.startSampling", { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !onlyMajor });
  setTimeout(async () => {
    const { profile } = await post("HeapProfiler.stopSampling");
    const file = path.join(os.tmpdir(), `heap-sampling-${process.pid}.json`);
    fs.writeFileSync(file, JSON.stringify(profile));
    console.error(`[heap-sampling] wrote ${file}`);
  }, Number(process.env.HEAP_SAMPLING_MS ?? 12_000)).unref();
}, Number(process.env.HEAP_SAMPLING_DELAY ?? 20_000)).unref();
