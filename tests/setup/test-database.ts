/**
 * The database a test file should use: the run's fresh PostgreSQL database when DATABASE_URL
 * is set (created and migrated once by tests/setup/database.ts), otherwise an in-memory PGlite
 * of this file's own, loaded from the migrated image the global setup made once per run.
 *
 * Loading the image takes about a third of a second; starting an empty PGlite (its initdb) and
 * migrating it took about three, for each of the ~130 test files.
 *
 * Every handle opened here is closed after the test file (tests/setup/per-file.ts). On
 * PostgreSQL all test files share the run's database, so each file must use its own workspace
 * ids (the schema keys everything by workspace).
 */
import { readFileSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { inject } from "vitest";
import { openDatabase, type Database, type DatabaseHandle } from "../../db/client";
import * as schema from "../../db/schema";

const open = new Set<DatabaseHandle>();
let image: Blob | undefined;

/** Tracks a handle so that it is closed after this test file. */
function tracked(handle: DatabaseHandle): DatabaseHandle {
  const close = handle.close;
  let closed: Promise<void> | undefined;
  handle.close = () => {
    open.delete(handle);
    closed ??= close();
    return closed;
  };
  open.add(handle);
  return handle;
}

export async function openTestDatabase(): Promise<DatabaseHandle> {
  const databaseUrl = inject("databaseUrl");
  if (databaseUrl) return tracked(await openDatabase({ databaseUrl, poolSize: 4 }));
  return openFreshEmbeddedDatabase();
}

/** An in-memory PGlite with every migration applied, whatever database this run uses: no other test file sees it. */
export async function openFreshEmbeddedDatabase(): Promise<DatabaseHandle> {
  const path = inject("embeddedImage");
  if (!path) throw new Error("the global setup made no migrated embedded image (tests/setup/database.ts)");
  image ??= new Blob([readFileSync(path)]);
  const pglite = new PGlite({ loadDataDir: image });
  await pglite.waitReady;
  const db = drizzle(pglite, { schema }) as unknown as Database;
  return tracked({ db, kind: "pglite", close: () => pglite.close() });
}

/** Closes every handle this file opened and has not closed (tests/setup/per-file.ts, after the file). */
export async function closeTestDatabases(): Promise<void> {
  await Promise.all([...open].map((handle) => handle.close()));
}
