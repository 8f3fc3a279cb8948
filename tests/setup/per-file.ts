/**
 * Runs around every test file (vitest `setupFiles`): closes the database handles the file
 * opened through tests/setup/test-database.ts, whether it opened them at top level or in a hook.
 * (An `afterAll` registered while a `beforeAll` runs is never called, so helpers cannot register
 * their own.)
 */
import { afterAll } from "vitest";
import { closeTestDatabases } from "./test-database";

afterAll(async () => {
  await closeTestDatabases();
});
