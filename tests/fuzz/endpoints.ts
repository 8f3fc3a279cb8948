/**
 * Property-based fuzzing of every route of the table (lib/server/router.ts) and the hosted pages,
 * through the production request listener on a real socket (see world.ts, cases.ts, oracle.ts).
 *
 * Property, for every generated request: an answer arrives; it is not a 5xx (501 aside); it
 * carries no stack trace, file path, SQL or database/JavaScript error text; its status is one
 * SPEC.md allows for that route and method (404 for unknown workspaces and paths, 405 with
 * Allow for a known path's other methods, 413 for bodies past the limit, 429 from edge limits);
 * and a body past the route's limit is never accepted.
 *
 * The routes are fuzzed in two halves, one test file each (endpoints-first-half.test.ts,
 * endpoints-second-half.test.ts), so the two test processes of a run share the work.
 *
 * A case's live values (world.ts `Live`) are minted for it when it spends them, and reused from
 * earlier cases when it only presents them and nothing since could have spent them (a bearer
 * token still live in the shared session, the sign-in transaction the portal's forms ignore):
 * the same seed sends the same cases, each value in the state a fresh one would be in.
 *
 * FUZZ_RUNS cases per property (default 100: with the fixed seed `npm test` sends the same cases
 * every run, a regression check; finding new failures is `npm run fuzz`'s, with 3,000 and a random
 * seed, and the release check's, `npm run fuzz:release`, five random seeds: scripts/fuzz.mjs draws
 * each seed once for both halves and prints it); FUZZ_SEED fixes the seed (default 20261122, so a
 * failure reproduces; `random` draws one per test file). fast-check prints the seed and the path of
 * a failure: `FUZZ_SEED=<seed> npm run fuzz` reproduces it. FUZZ_REPORT=1 collects every
 * distinct failure instead of stopping at the first (to survey a build).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, it } from "vitest";
import { materialize, materializePage, pageRecipe, recipe, ROUTES, type Built } from "./cases";
import { corsProblem, expectAtHost, expectPage, expectRoute, judge, type Expectation } from "./oracle";
import { send, type WireAnswer, type WireRequest, type WireResult } from "./wire";
import { startWorld, type World } from "./world";

const RUNS = Number(process.env.FUZZ_RUNS || 100);
const SEED = process.env.FUZZ_SEED === "random" ? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0 : Number(process.env.FUZZ_SEED || 20261122);
const REPORT = process.env.FUZZ_REPORT === "1";
/** Shrinking a failure sends many more requests: bound a property's whole run. */
const TIME_LIMIT_MS = Number(process.env.FUZZ_TIME_LIMIT_MS || Math.max(60_000, RUNS * 250));

let world: World;

const clip = (s: string, n = 240) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

function describeCase(request: WireRequest, result: WireResult, problem: string): string {
  const body = request.body ? ` body(${request.body.length} bytes${request.chunked ? ", chunked" : ""}): ${JSON.stringify(clip(request.body.toString("latin1")))}` : "";
  const answer = result.ok ? `${result.answer.status} ${JSON.stringify(clip(result.answer.body.toString("utf8"), 400))}` : result.error;
  return [
    problem,
    `  request: ${JSON.stringify(clip(`${request.method} ${request.target}`, 400))}`,
    `  headers: ${JSON.stringify(request.headers.map(([n, v]) => [n, clip(v, 120)]))}${body}`,
    `  answer:  ${answer}`,
  ].join("\n");
}

interface Prepared {
  built: Built;
  expectation: Expectation;
  limit: number | undefined;
  /** Route-specific checks beyond the status (CORS). */
  extra?: (request: WireRequest, answer: WireAnswer) => string | null;
  /** Groups failures in the survey (FUZZ_REPORT=1). */
  shape: string;
}

const surveyed = new Map<string, string>();

/** Fuzzes one property: `route` is the route table's path it sends to (null for the pages). */
async function fuzz<T>(name: string, route: string | null, index: number, arbitrary: fc.Arbitrary<T>, prepare: (value: T) => Promise<Prepared>): Promise<void> {
  const started = Date.now();
  let cases = 0;
  // How deep the cases reach: the statuses answered (successes mean valid values got through).
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(arbitrary, async (value) => {
      cases++;
      const { built, expectation, limit, extra, shape } = await prepare(value);
      const { request } = built;
      const tooLarge = !!expectation.reachesRoute && limit !== undefined && built.bodyBytes > limit;
      // Reused live values this request could spend are minted afresh for the next case (world.ts `Live`).
      world.live.sending(route, `${request.target}\n${request.headers.map(([, v]) => v).join("\n")}\n${request.body?.toString("latin1") ?? ""}`);
      const result = await send(world.port, request, built.host);
      if (result.ok) statuses.set(result.answer.status, (statuses.get(result.answer.status) ?? 0) + 1);
      let problem: string | null;
      if (!result.ok) {
        // A body far past every limit may be cut off by the server's early answer and close.
        problem = tooLarge && built.bodyBytes > 64 * 1024 && /ECONNRESET|EPIPE|closed/.test(result.error) ? null : `no answer: ${result.error}`;
      } else {
        problem = judge(request.method, request.headers, result.answer, expectation, built.echoes, tooLarge) ?? extra?.(request, result.answer) ?? null;
      }
      if (!problem) return;
      const report = describeCase(request, result, problem);
      if (!REPORT) throw new Error(report);
      const status = result.ok ? result.answer.status : 0;
      const signature = `${name} | ${request.method} | ${shape} | ${status} | ${problem.replace(/:[\s\S]*/, "").replace(/\(.*/, "")}`;
      // Keep the shortest example of each kind.
      const known = surveyed.get(signature);
      if (!known || known.length > report.length) surveyed.set(signature, report);
    }),
    { numRuns: RUNS, seed: SEED + index, interruptAfterTimeLimit: TIME_LIMIT_MS, markInterruptAsFailure: false },
  );
  const histogram = [...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}×${n}`).join(" ");
  console.log(`[fuzz] ${name}: ${cases} requests (with shrinking) in ${((Date.now() - started) / 1000).toFixed(1)} s; statuses ${histogram}`);
}

const PER_TEST_TIMEOUT = TIME_LIMIT_MS + 30_000;

/** Fuzzes half of the routes (`half` 0: the even positions of the table; 1: the odd ones and the hosted pages). */
export function fuzzHalf(half: 0 | 1): void {
  describe("fuzzing every endpoint through the production listener", () => {
    beforeAll(async () => {
      world = await startWorld();
      console.log(`[fuzz] ${RUNS} cases per property, seed ${SEED} (FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} npm run fuzz reproduces); Next's paths served by the ${world.handler}`);
    }, 120_000);

    afterAll(async () => {
      await world?.close();
    });

    ROUTES.forEach((spec, index) => {
      if (index % 2 !== half) return;
      it(
        `${spec.method} ${spec.path} (${spec.name})`,
        () =>
          fuzz(spec.name, spec.path, index, recipe(spec), async (r) => {
            const built = await materialize(r, spec, world.live);
            const expectation = expectAtHost(r.host, built.request.target, world.ws) ?? expectRoute(spec, r.method, r.workspace, built.request.target, built.routePath ?? spec.path);
            return {
              built,
              expectation,
              limit: spec.limit,
              extra: (request, answer) => corsProblem(spec, request.method, !!expectation.reachesRoute, request.headers, answer),
              shape: `${r.host.kind} host, ${r.workspace.kind} workspace, ${r.path} path`,
            };
          }),
        PER_TEST_TIMEOUT,
      );
    });

    if (half === 1) {
      it(
        "hosted pages, unknown and reserved paths, paths outside the issuers",
        () =>
          fuzz("pages", null, ROUTES.length, pageRecipe, async (r) => {
            const built = await materializePage(r, world.live);
            return {
              built,
              expectation: expectAtHost(r.host, built.request.target, world.ws) ?? expectPage(r.page, r.method, r.workspace),
              limit: undefined,
              shape: `${r.host.kind} host, ${r.workspace.kind} workspace, ${r.page.kind}`,
            };
          }),
        PER_TEST_TIMEOUT,
      );
    }

    afterAll(() => {
      if (!REPORT) return;
      console.log(`[fuzz] ${surveyed.size} distinct failures:\n\n${[...surveyed].map(([sig, report]) => `## ${sig}\n${report}`).join("\n\n")}`);
    });
  });
}
