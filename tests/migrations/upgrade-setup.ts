/**
 * A vitest global setup for a run of the previous release's own tests (tests/migrations/rolling-upgrade.test.ts):
 * after the previous release's global setup made its databases at its own schema, this applies
 * this checkout's migrations to them, as a new release starting next to running instances of the
 * old one does. The previous release's code then runs on the upgraded schema.
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import type { TestProject } from "vitest/node";
import { openDatabase, runMigrations, type Database } from "../../db/client";

/** This checkout's migrations (the run's working directory is the previous release's checkout). */
const folder = path.join(import.meta.dirname, "..", "..", "db", "migrations");

export default async function setup(project: TestProject): Promise<void> {
  const { databaseUrl, embeddedImage } = project.getProvidedContext() as { databaseUrl?: string; embeddedImage?: string };
  // What was applied to which database, a line each, in the file the caller names.
  const report = (database: string, applied: string[]) => {
    if (process.env.LATCHKEY_UPGRADE_REPORT) appendFileSync(process.env.LATCHKEY_UPGRADE_REPORT, `${JSON.stringify({ database, applied })}\n`);
  };
  if (databaseUrl) {
    const handle = await openDatabase({ databaseUrl, poolSize: 1 });
    try {
      report("postgres", (await runMigrations(handle, databaseUrl, { folder })).applied);
    } finally {
      await handle.close();
    }
  }
  if (embeddedImage) {
    const pglite = new PGlite({ loadDataDir: new Blob([readFileSync(embeddedImage)]) });
    await pglite.waitReady;
    try {
      report("embedded", (await runMigrations({ db: drizzle(pglite) as unknown as Database, kind: "pglite", close: async () => {} }, undefined, { folder })).applied);
      writeFileSync(embeddedImage, Buffer.from(await (await pglite.dumpDataDir("none")).arrayBuffer()));
    } finally {
      await pglite.close();
    }
  }
}
