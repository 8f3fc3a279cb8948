import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = fileURLToPath(new URL(".", import.meta.url));

/**
 * The endpoint fuzz (tests/fuzz/endpoints.ts), the run's longest files. FUZZ_SKIP=1 leaves it
 * out: `.ci/run` fuzzes once, on PostgreSQL, and sets it for its embedded run (scripts/test.mjs).
 */
const FUZZ_ENDPOINTS = ["tests/fuzz/endpoints-first-half.test.ts", "tests/fuzz/endpoints-second-half.test.ts"];

/**
 * Test files that change what a module holds for the whole process (a mocked module, a stubbed
 * environment variable read at import, React's server renderer, Next's handler loaded in the
 * process): each runs in a process of its own. Every other file shares its process, and the modules it imports, with the files run before
 * it: importing the module graph once per process instead of once per file is most of a run's time.
 */
const ISOLATED = [
  "tests/integration/demo-app.test.ts",
  "tests/integration/server-action-origin.test.ts",
  "tests/docs/integration-guide.test.ts",
  "lib/cli/admin-socket.test.ts",
  "tests/integration/i18n/portal-languages.test.ts",
  "tests/integration/i18n/hosted-languages.test.ts",
  // Its vi.mock of lib/service reaches the route files' getService only in a module graph of its own
  // (in the shared one an earlier file's service, its pool closed, answered: CONNECTION_ENDED on PostgreSQL).
  "tests/dispatch/edge-rule.test.ts",
  // Next's production handler in the test process (NODE_ENV, the service holder).
  ...FUZZ_ENDPOINTS,
];

const TESTS = ["lib/**/*.test.ts", "db/**/*.test.ts", "tests/**/*.test.ts"];
const NOT_TESTS = ["e2e/**", "node_modules/**", ".next/**", ...(process.env.FUZZ_SKIP === "1" ? FUZZ_ENDPOINTS : [])];

export default defineConfig({
  resolve: { alias: { "@/": root } },
  test: {
    environment: "node",
    // One migrated embedded image per run and, with DATABASE_URL, one fresh migrated PostgreSQL
    // database per run (see the file).
    globalSetup: ["tests/setup/database.ts"],
    // Closes the database handles each test file opened (tests/setup/test-database.ts).
    setupFiles: ["tests/setup/per-file.ts"],
    // Test processes at a time: two on the embedded database, whose queries run in the test
    // process itself (CI machines have two cores; a third made that run slower: 410 s against
    // 381 s); three on PostgreSQL, where a test process waits on the server's answers (its round
    // trips, its commits) and a third keeps the cores busy meanwhile. Processes, not worker
    // threads: V8 aborts a process whose worker threads create and free many PGlite instances
    // (nodejs/node#64500); here a process keeps one.
    pool: "forks",
    maxWorkers: process.env.DATABASE_URL ? 3 : 2,
    // argon2 hashing costs ~50 ms per call, and CI runs the unit tests beside the e2e lane on two
    // cores: a test that opens its own embedded databases or starts a server has measured 30-40 s
    // there. A timeout is a guard against a hang, not a speed target (those live in bench/).
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: "shared", isolate: false, include: TESTS, exclude: [...ISOLATED, ...NOT_TESTS] } },
      { extends: true, test: { name: "isolated", isolate: true, include: ISOLATED, exclude: NOT_TESTS } },
    ],
  },
});
