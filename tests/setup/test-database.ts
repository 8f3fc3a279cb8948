/**
 * The database a test file should use: the run's fresh PostgreSQL database when DATABASE_URL
 * is set (created and migrated once by tests/setup/database.ts), otherwise an in-memory PGlite
 * per test process, loaded from the migrated image the global setup made once per run.
 *
 * Loading the image takes about half a second; starting an empty PGlite (its initdb) and
 * migrating it took about three, which every one of the ~130 test files used to pay.
 *
 * On either database the files a process runs share one database, so each file must use its own
 * workspace ids (the schema keys everything by workspace). A file that needs a database no other
 * file sees opens one with `openFreshEmbeddedDatabase`. Handles other than the shared embedded
 * one are closed after the test file (tests/setup/per-file.ts).
 */
import { readFileSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { inject } from "vitest";
import { openDatabase, type Database, type DatabaseHandle } from "../../db/client";
import * as schema from "../../db/schema";

const open = new Set<DatabaseHandle>();
let image: Blob | undefined;

/** Tracks a handle so that it is closed after this test file (its `close` may do more, such as drop its database). */
export function tracked(handle: DatabaseHandle): DatabaseHandle {
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

let sharedEmbedded: Promise<DatabaseHandle> | undefined;

/**
 * The run's database for this test file. On PostgreSQL: a pool on the run's database, closed
 * after the file. On the embedded database: this process's one PGlite, loaded from the image on
 * first use and kept for the next files this process runs (vitest's `isolate: false` keeps this
 * module between them), as the run's PostgreSQL database is kept for every file.
 */
export async function openTestDatabase(): Promise<DatabaseHandle> {
  const databaseUrl = inject("databaseUrl");
  if (databaseUrl) return tracked(await openDatabase({ databaseUrl, poolSize: 4 }));
  sharedEmbedded ??= loadImage().then((pglite) => ({
    db: drizzle(pglite, { schema }) as unknown as Database,
    kind: "pglite" as const,
    // Shared by the files after this one: it lives as long as the process.
    close: async () => {},
  }));
  return sharedEmbedded;
}

async function loadImage(): Promise<PGlite> {
  const path = inject("embeddedImage");
  if (!path) throw new Error("the global setup made no migrated embedded image (tests/setup/database.ts)");
  image ??= new Blob([readFileSync(path)]);
  const pglite = new PGlite({ loadDataDir: image });
  await pglite.waitReady;
  return pglite;
}

/**
 * A database handle of the caller's own, which it may close (to see how the service answers when
 * its database goes away) without closing the shared one: a pool of its own on the run's
 * PostgreSQL database, or a fresh embedded database.
 */
export async function openOwnTestDatabase(): Promise<DatabaseHandle> {
  const databaseUrl = inject("databaseUrl");
  return databaseUrl ? tracked(await openDatabase({ databaseUrl, poolSize: 2 })) : openFreshEmbeddedDatabase();
}

/** An in-memory PGlite with every migration applied, whatever database this run uses: no other test file sees it. */
export async function openFreshEmbeddedDatabase(): Promise<DatabaseHandle> {
  const pglite = await loadImage();
  const db = drizzle(pglite, { schema }) as unknown as Database;
  return tracked({ db, kind: "pglite", close: () => pglite.close() });
}

/** Closes every handle this file opened and has not closed (tests/setup/per-file.ts, after the file). */
export async function closeTestDatabases(): Promise<void> {
  await Promise.all([...open].map((handle) => handle.close()));
}
