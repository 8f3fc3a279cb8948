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
    // Test files run in parallel, two at a time (CI machines have two cores).
    pool: "threads",
    maxWorkers: 2,
    // argon2 hashing costs ~50 ms per call; PGlite start-up and migrations take a second or two.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
