// Our server's own view of its memory and garbage collection, read from its Prometheus listener
// (METRICS_PORT, lib/metrics/listener.ts) around each measurement, so a heap regression shows next
// to the figure it costs.

/** A sample's value (summed over its label sets when `labels` is not given). */
function value(text, name, labels) {
  let sum = 0;
  let found = false;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (!(rest.startsWith(" ") || rest.startsWith("{"))) continue;
    if (labels && !rest.startsWith(`{${labels}}`)) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
    found = true;
  }
  return found ? sum : NaN;
}

const MiB = 1024 * 1024;

/** Heap used, resident memory and collection counts (major: mark-compact) as the server reports them. */
export async function scrapeServerMetrics(url) {
  // A connection per scrape: a pooled one may have been closed by the server while this process waited.
  const response = await fetch(url, { headers: { connection: "close" } });
  if (response.status !== 200) throw new Error(`metrics answered ${response.status} at ${url}`);
  const text = await response.text();
  return {
    heapUsedMiB: value(text, "nodejs_heap_size_used_bytes") / MiB,
    heapTotalMiB: value(text, "nodejs_heap_size_total_bytes") / MiB,
    rssMiB: value(text, "process_resident_memory_bytes") / MiB,
    majorGcs: value(text, "nodejs_gc_duration_seconds_count", 'kind="major"') || 0,
    gcs: value(text, "nodejs_gc_duration_seconds_count") || 0,
    majorGcSeconds: value(text, "nodejs_gc_duration_seconds_sum", 'kind="major"') || 0,
  };
}
