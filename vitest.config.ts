import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  resolve: { alias: { "@/": root } },
  test: {
    environment: "node",
    include: ["lib/**/*.test.ts", "db/**/*.test.ts", "tests/**/*.test.ts"],
    exclude: ["e2e/**", "node_modules/**", ".next/**"],
    // With DATABASE_URL set: one fresh, migrated PostgreSQL database per run (see the file).
    globalSetup: ["tests/setup/database.ts"],
    // Closes the database handles each test file opened (tests/setup/test-database.ts).
    setupFiles: ["tests/setup/per-file.ts"],
    // Test files run in parallel, two at a time (CI machines have two cores), each in a process of
    // its own: V8 aborts a process that creates and frees many PGlite instances in worker threads
    // (nodejs/node#64500), so no process here makes more than the few its file asks for.
    pool: "forks",
    maxWorkers: 2,
    // argon2 hashing costs ~50 ms per call; PGlite start-up and migrations take a second or two.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
