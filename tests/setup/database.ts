/**
 * Vitest global setup: a fresh PostgreSQL database per test run.
 *
 * With DATABASE_URL set, this creates `latchkey_test_<timestamp>_<random>` on that server, runs
 * the migrations once, and hands its URL to the test workers twice over: as
 * `inject("databaseUrl")` and as `process.env.DATABASE_URL` (workers start after this runs, so
 * code that reads the environment sees the fresh database, never the one configured). The
 * database is dropped on teardown. The database named in DATABASE_URL itself is never written.
 *
 * Whatever the database, it also makes one migrated embedded database and saves its image (a
 * tar of the data directory) under .test-data/: each test file on the embedded database loads
 * its own copy (tests/setup/test-database.ts), as do the few files that need a database no
 * other file sees. Migrating once per run instead of once per file is most of what the
 * embedded run saves.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import type { TestProject } from "vitest/node";
import { openDatabase, runMigrations } from "../../db/client";

declare module "vitest" {
  export interface ProvidedContext {
    /** URL of this run's fresh PostgreSQL database; undefined when tests use PGlite. */
    databaseUrl: string | undefined;
    /** Path of the migrated embedded database's image (a data-directory tar), loaded per test file. */
    embeddedImage: string;
  }
}

/**
 * The tag of this test run, in the name of every database it creates on the server: set by
 * scripts/test.mjs (which checks at its end that none of its run's is left), else drawn by the
 * global setup for the run (`prepareRun`), which workers inherit. `<time>x<random>`.
 */
export const RUN_TAG_VARIABLE = "LATCHKEY_TEST_RUN";

function runTag(): string {
  return (process.env[RUN_TAG_VARIABLE] ??= `${Date.now()}x${randomBytes(2).toString("hex")}`);
}

/** `<prefix>_<run tag>_<random>`: the run's tag (`runTag`), and a random suffix so that parallel runs on one server never collide. */
export function freshDatabaseName(prefix: string): string {
  return `${prefix}_${runTag()}_${randomBytes(4).toString("hex")}`;
}

/** The databases on the server of `serverUrl` whose names carry the run tag `tag` (`freshDatabaseName`). */
export async function runDatabases(serverUrl: string, tag: string): Promise<string[]> {
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    const rows = await admin<{ datname: string }[]>`select datname from pg_database where position(${`_${tag}_`} in datname) > 0 order by datname`;
    return rows.map((r) => r.datname);
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/** Creates an empty database on the server of `serverUrl` and returns its URL. */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops a database, disconnecting whatever is still attached to it. */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/** Migrates an in-memory embedded database and writes its image to a file of this run. */
async function writeEmbeddedImage(): Promise<string> {
  const handle = await openDatabase({});
  try {
    await runMigrations(handle);
    const pglite = (handle.db as unknown as { $client: PGlite }).$client;
    const image = await pglite.dumpDataDir("none");
    const dir = path.join(process.cwd(), ".test-data");
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${freshDatabaseName("embedded-image")}.tar`);
    writeFileSync(file, Buffer.from(await image.arrayBuffer()));
    return file;
  } finally {
    await handle.close();
  }
}

interface RunDatabases {
  embeddedImage: string;
  databaseUrl: string | undefined;
  teardown(): Promise<void>;
}

async function prepareRun(): Promise<RunDatabases> {
  const image = await writeEmbeddedImage();
  const removeImage = async () => rmSync(image, { force: true });

  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) return { embeddedImage: image, databaseUrl: undefined, teardown: removeImage };
  const tag = runTag();
  const name = freshDatabaseName("latchkey_test");
  const databaseUrl = await createDatabase(serverUrl, name);
  try {
    const handle = await openDatabase({ databaseUrl, poolSize: 1 });
    try {
      await runMigrations(handle, databaseUrl);
    } finally {
      await handle.close();
    }
  } catch (error) {
    await removeImage();
    await dropDatabase(serverUrl, name);
    throw error;
  }
  process.env.DATABASE_URL = databaseUrl;
  return {
    embeddedImage: image,
    databaseUrl,
    teardown: async () => {
      process.env.DATABASE_URL = serverUrl;
      await removeImage();
      await dropDatabase(serverUrl, name);
      // Whatever a test file made and did not drop (its process ended before its hooks, a hook
      // failed): every database of this run goes with it, whether the run passed or not.
      for (const left of await runDatabases(serverUrl, tag)) {
        if (left.startsWith("latchkey_e2e_")) continue; // the e2e server's, dropped by its own process (e2e/serve.mjs)
        console.warn(`[test] dropping ${left}, left by a test file of this run`);
        await dropDatabase(serverUrl, left);
      }
    },
  };
}

/**
 * The run's databases are made once, whichever of the run's projects (vitest.config.ts) sets up
 * first, and removed after the last one is done: every project's files see the same ones.
 */
const RUN = Symbol.for("latchkey.test-run-databases");
type Holder = { prepared?: Promise<RunDatabases>; projects: number };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const holder: Holder = ((globalThis as Record<symbol, Holder>)[RUN] ??= { projects: 0 });
  holder.projects++;
  holder.prepared ??= prepareRun();
  const run = await holder.prepared;
  project.provide("embeddedImage", run.embeddedImage);
  project.provide("databaseUrl", run.databaseUrl);
  return async () => {
    if (--holder.projects > 0) return;
    holder.prepared = undefined;
    await run.teardown();
  };
}
