/**
 * The database a test file should use: the run's fresh PostgreSQL database when DATABASE_URL
 * is set (created and migrated once by tests/setup/database.ts), otherwise an in-memory PGlite
 * migrated for this file alone. Close it in afterAll.
 *
 * On PostgreSQL all test files share the run's database, so each file must use its own
 * workspace ids (the schema keys everything by workspace).
 */
import { inject } from "vitest";
import { openDatabase, runMigrations, type DatabaseHandle } from "../../db/client";

export async function openTestDatabase(): Promise<DatabaseHandle> {
  const databaseUrl = inject("databaseUrl");
  if (databaseUrl) return openDatabase({ databaseUrl, poolSize: 4 });
  const handle = await openDatabase({});
  await runMigrations(handle);
  return handle;
}
