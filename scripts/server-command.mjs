// How the production server process is started, shared by `npm start` (scripts/start.mjs), the
// e2e server (e2e/serve.mjs), the dispatch tests that start the real server and `npm run bench`
// (bench/run.mjs), so each runs exactly what `npm start` runs: the compiled server
// (scripts/build-server.mjs) under plain node.
import { SERVER_BUNDLE } from "./build-server.mjs";

/**
 * The V8 old-space limit in MiB unless the operator set one in NODE_OPTIONS. Node's default
 * grows the heap to a few hundred MiB before collecting old objects hard; Latchkey's working set
 * (the Next server, the route table, caches bounded by size) fits well below this, and the
 * benchmark's peak RSS stays under 400 MiB with it (docs/performance.md).
 */
export const DEFAULT_HEAP_MIB = 256;

/** The compiled server, relative to the checkout (the working directory it runs in). */
export const SERVER_ENTRY = SERVER_BUNDLE;

/** Node flags for the server: the heap limit, unless NODE_OPTIONS names one. */
export function serverNodeArgs(env = process.env) {
  const args = [];
  if (!/--max-old-space-size/.test(env.NODE_OPTIONS ?? "")) args.push(`--max-old-space-size=${DEFAULT_HEAP_MIB}`);
  return args;
}
