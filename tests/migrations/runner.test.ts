/**
 * The migration runner (db/migrator.ts through runMigrations in db/client.ts): compatible with
 * drizzle's migrator in both directions, a no-transaction migration run outside a transaction and
 * recorded as drizzle records, an index left invalid by a failed concurrent build built again,
 * what it says while it works; on PostgreSQL, instances that start together migrate once, the
 * others wait, say so and find nothing pending, and a table held by another session makes it give
 * up (lock_timeout) rather than queue every request behind it.
 *
 * On the run's database: in the embedded run on a fresh in-memory PGlite each; in the PostgreSQL
 * run on fresh databases of their own, made on the run's server (DATABASE_URL).
 */
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import { readMigrationFiles } from "drizzle-orm/migrator";
import postgres from "postgres";
import { afterAll, describe, expect, inject, it } from "vitest";
import { openDatabase, runMigrations, type DatabaseHandle, type MigrateOptions } from "../../db/client";
import { MigrationError, MigrationWaitTimeout, readMigrations } from "../../db/migrator";
import { createDatabase, dropDatabase, freshDatabaseName } from "../setup/database";
import { migrationFolder, realFolder, realJournal, removeMigrationFolders } from "./fixtures";

const NO_TX = "-- latchkey:no-transaction\n";
const serverUrl = inject("databaseUrl");

/** A database of this test's own: an in-memory PGlite, or a fresh PostgreSQL database dropped after the file. */
interface Own {
  handle: DatabaseHandle;
  url?: string;
  /** Rows of a query on it. */
  query(text: string): Promise<Record<string, unknown>[]>;
  migrate(options?: MigrateOptions): ReturnType<typeof runMigrations>;
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  removeMigrationFolders();
});

async function ownEmbedded(): Promise<Own> {
  const handle = await openDatabase({});
  cleanups.push(() => handle.close());
  const pglite = (handle.db as unknown as { $client: PGlite }).$client;
  return { handle, query: async (text) => (await pglite.query<Record<string, unknown>>(text)).rows, migrate: (options) => runMigrations(handle, undefined, options) };
}

async function ownPostgres(): Promise<Own> {
  const name = freshDatabaseName("latchkey_migrations");
  const url = await createDatabase(serverUrl!, name);
  const handle = await openDatabase({ databaseUrl: url, poolSize: 2 });
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  cleanups.push(async () => {
    await sql.end({ timeout: 5 });
    await handle.close();
    await dropDatabase(serverUrl!, name);
  });
  return { handle, url, query: async (text) => [...(await sql.unsafe(text))], migrate: (options) => runMigrations(handle, url, options) };
}

function recorder(): { log: (line: string) => void; lines: string[] } {
  const lines: string[] = [];
  return { lines, log: (line) => lines.push(line) };
}

const applied = async (own: Own) => (await own.query(`select hash, created_at::text as created_at from drizzle.__drizzle_migrations order by id`)).map((r) => ({ hash: r.hash, when: Number(r.created_at) }));
const indexValid = async (own: Own, name: string) => (await own.query(`select indisvalid from pg_index where indexrelid = to_regclass('"${name}"')`))[0]?.indisvalid;

describe("reading migrations", () => {
  it("hashes, stamps and splits each file as drizzle's migrator does", () => {
    const ours = readMigrations(realFolder);
    const drizzles = readMigrationFiles({ migrationsFolder: realFolder });
    expect(ours.map((m) => ({ hash: m.hash, when: m.when }))).toEqual(drizzles.map((m) => ({ hash: m.hash, when: m.folderMillis })));
    expect(ours.map((m) => m.statements)).toEqual(drizzles.map((m) => m.sql.filter((s) => s.trim() !== "")));
    expect(ours.map((m) => m.tag)).toEqual(realJournal().entries.map((e) => e.tag));
    // 0021 builds its index concurrently: outside a transaction.
    expect(ours.filter((m) => m.noTransaction).map((m) => m.tag)).toEqual(["0021_launch_expiry_index"]);
  });
});

/**
 * The run's database: the embedded run migrates fresh in-memory PGlites, the PostgreSQL run fresh
 * databases on its server (`.ci/run` does both, so each case runs once per database, not twice on
 * the embedded one).
 */
const databases: [string, () => Promise<Own>][] = serverUrl ? [["PostgreSQL", ownPostgres]] : [["the embedded database", ownEmbedded]];

describe.each(databases)("on %s", (_name, open) => {
  it("takes over from drizzle's migrator and hands back to it: what is pending, the hash and created_at it records", async () => {
    const own = await open();
    // An installation migrated by drizzle's own migrator up to 0020 (before 0021 ran outside a transaction).
    const upTo0020 = migrationFolder([], { prefix: 21 });
    if (own.url) {
      const client = postgres(own.url, { max: 1, onnotice: () => {} });
      await migratePostgres(drizzlePostgres(client), { migrationsFolder: upTo0020 });
      await client.end();
    } else {
      await migratePglite(drizzlePglite((own.handle.db as unknown as { $client: PGlite }).$client), { migrationsFolder: upTo0020 });
    }
    const { log, lines } = recorder();
    // 0021 and whatever came after it.
    const later = realJournal().entries.slice(21).map((e) => e.tag);
    expect((await own.migrate({ log })).applied).toEqual(later);
    const expected = readMigrationFiles({ migrationsFolder: realFolder }).map((m) => ({ hash: m.hash, when: m.folderMillis }));
    expect(await applied(own)).toEqual(expected);
    expect(await indexValid(own, "account_security_launches_expiry_idx")).toBe(true);
    expect(lines).toEqual([
      `${later.length} database migration${later.length === 1 ? "" : "s"} pending: ${later.join(", ")}; applying…`,
      expect.stringMatching(/^ {2}0021_launch_expiry_index \(outside a transaction\): \d+ ms$/),
      ...later.slice(1).map((tag) => expect.stringMatching(new RegExp(`^ {2}${tag}( \\(outside a transaction\\))?: \\d+ ms$`))),
      expect.stringMatching(new RegExp(`^migrations done: ${later.length} applied in \\d+ ms$`)),
    ]);
    // drizzle's migrator, on what this one recorded, finds nothing to do; so does this one, silently.
    if (own.url) {
      const client = postgres(own.url, { max: 1, onnotice: () => {} });
      await migratePostgres(drizzlePostgres(client), { migrationsFolder: realFolder });
      await client.end();
    } else {
      await migratePglite(drizzlePglite((own.handle.db as unknown as { $client: PGlite }).$client), { migrationsFolder: realFolder });
    }
    const again = recorder();
    expect((await own.migrate({ log: again.log })).applied).toEqual([]);
    expect(again.lines).toEqual([]);
    expect(await applied(own)).toEqual(expected);
  });

  it("a new database: one line, then done", async () => {
    const own = await open();
    const { log, lines } = recorder();
    const result = await own.migrate({ log });
    expect(result.applied).toHaveLength(realJournal().entries.length);
    expect(lines).toEqual([`new database: applying ${realJournal().entries.length} migrations…`, expect.stringMatching(/^migrations done: \d+ applied in \d+(\.\d)? m?s$/)]);
  });

  it("runs a no-transaction migration outside the transaction (CONCURRENTLY, which drizzle's migrator cannot run), between transactional ones", async () => {
    const own = await open();
    const sql = [
      `CREATE TABLE "t" ("v" integer);--> statement-breakpoint\nINSERT INTO "t" SELECT generate_series(1, 100);`,
      `CREATE TABLE "u" ("v" integer);`,
      `${NO_TX}CREATE INDEX CONCURRENTLY IF NOT EXISTS "t_v_idx" ON "t" USING btree ("v");--> statement-breakpoint\nCREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "t_v_uq" ON "t" ("v");`,
      `ALTER TABLE "t" ADD COLUMN "w" text;`,
    ];
    // An older release applied the first; this one brings the rest.
    await own.migrate({ folder: migrationFolder(sql.slice(0, 1)) });
    const folder = migrationFolder(sql);
    const { log, lines } = recorder();
    expect((await own.migrate({ folder, log })).applied).toEqual(["0001_fixture", "0002_fixture", "0003_fixture"]);
    expect(await indexValid(own, "t_v_idx")).toBe(true);
    expect(await indexValid(own, "t_v_uq")).toBe(true);
    expect(lines).toEqual([
      "3 database migrations pending: 0001_fixture, 0002_fixture, 0003_fixture; applying…",
      expect.stringMatching(/^ {2}0001_fixture: \d+ ms$/),
      expect.stringMatching(/^ {2}0002_fixture \(outside a transaction\): \d+ ms$/),
      expect.stringMatching(/^ {2}0003_fixture: \d+ ms$/),
      expect.stringMatching(/^migrations done: 3 applied in \d+ ms$/),
    ]);
    expect((await applied(own)).map((r) => r.hash)).toEqual(readMigrationFiles({ migrationsFolder: folder }).map((m) => m.hash));

    // drizzle's migrator runs everything in one transaction, where CONCURRENTLY fails.
    const other = await open();
    const failing = other.url
      ? (async () => {
          const client = postgres(other.url!, { max: 1, onnotice: () => {} });
          try {
            await migratePostgres(drizzlePostgres(client), { migrationsFolder: folder });
          } finally {
            await client.end();
          }
        })()
      : migratePglite(drizzlePglite((other.handle.db as unknown as { $client: PGlite }).$client), { migrationsFolder: folder });
    const error = (await failing.then(() => null, (e: Error) => e)) as (Error & { cause?: Error }) | null;
    expect(error?.cause?.message ?? error?.message).toMatch(/cannot run inside a transaction block/);
  });

  it("a failed transactional migration rolls back its group; migrations before a no-transaction one stay applied; the next start resumes", async () => {
    const own = await open();
    const folder = migrationFolder([
      `CREATE TABLE "a" ("id" integer);`,
      `${NO_TX}CREATE INDEX CONCURRENTLY IF NOT EXISTS "a_id_idx" ON "a" ("id");`,
      `CREATE TABLE "b" ("id" integer);`,
      `ALTER TABLE "missing" ADD COLUMN "x" text;`,
    ]);
    const { log, lines } = recorder();
    await expect(own.migrate({ folder, log })).rejects.toThrow(MigrationError);
    expect(lines.at(-1)).toMatch(/^0003_fixture failed: .*missing.*\. Rolled back: 0002_fixture, 0003_fixture not applied\.$/);
    expect(await applied(own)).toHaveLength(2);
    expect(await own.query(`select to_regclass('"b"') as b`)).toEqual([{ b: null }]);
  });

  it("rebuilds an index that a failed concurrent build left INVALID, instead of keeping it (IF NOT EXISTS alone would)", async () => {
    const own = await open();
    const folder = migrationFolder([
      `CREATE TABLE "t" ("v" integer);--> statement-breakpoint\nINSERT INTO "t" VALUES (1), (1), (2);`,
      `${NO_TX}CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "t_v_uq" ON "t" ("v");`,
    ]);
    const first = recorder();
    await expect(own.migrate({ folder, log: first.log })).rejects.toThrow(/0001_fixture failed: .*(duplicate|unique)/i);
    expect(first.lines.at(-1)).toMatch(/^0001_fixture failed: .*the next start runs it again/);
    // The failed build left the index behind, invalid, and the migration unrecorded.
    expect(await indexValid(own, "t_v_uq")).toBe(false);
    expect(await applied(own)).toHaveLength(1);

    await own.query(`delete from "t" where ctid = (select max(ctid) from "t" where "v" = 1)`);
    const second = recorder();
    expect((await own.migrate({ folder, log: second.log })).applied).toEqual(["0001_fixture"]);
    expect(second.lines).toContain("  0001_fixture: index \"t_v_uq\" was left invalid by an interrupted build; dropping it to build it again");
    expect(await indexValid(own, "t_v_uq")).toBe(true);
    expect(await applied(own)).toHaveLength(2);
  });
});

describe.runIf(serverUrl)("instances starting together on PostgreSQL", () => {
  it("two runMigrations on a fresh database both succeed and the migrations are applied once", async () => {
    const own = await ownPostgres();
    const second = await openDatabase({ databaseUrl: own.url, poolSize: 1 });
    cleanups.push(() => second.close());
    const a = recorder();
    const b = recorder();
    const results = await Promise.all([runMigrations(own.handle, own.url, { log: a.log }), runMigrations(second, own.url, { log: b.log })]);
    const count = realJournal().entries.length;
    expect(results.map((r) => r.applied.length).sort((x, y) => x - y)).toEqual([0, count]);
    expect(await own.query(`select count(*)::int as n from drizzle.__drizzle_migrations`)).toEqual([{ n: count }]);
    const [migrated, waited] = results[0]!.applied.length ? [a.lines, b.lines] : [b.lines, a.lines];
    expect(migrated[0]).toBe(`new database: applying ${count} migrations…`);
    // The other either waited (and said so) or came after the first had finished.
    if (waited.length) expect(waited).toEqual([expect.stringMatching(/^waiting for another instance to finish migrating \(/), "another instance applied the migrations; nothing pending"]);
  });

  it("the one that waits says so at once and periodically (naming what the migrating session runs), then finds nothing pending; past the bound it gives up", async () => {
    const own = await ownPostgres();
    const folder = migrationFolder([`CREATE TABLE "t" ("v" integer);--> statement-breakpoint\nSELECT pg_sleep(1.5);`, `ALTER TABLE "t" ADD COLUMN "w" text;`]);
    const first = recorder();
    let applying!: () => void;
    const started = new Promise<void>((resolve) => (applying = resolve));
    const migrating = runMigrations(own.handle, own.url, {
      folder,
      log: (line) => {
        first.log(line);
        if (line.includes("applying")) applying();
      },
    });
    await started;
    // "applying" is said before the migration's first statement runs: on a busy machine the waiter's
    // first look could find the session between statements. Start it once the sleep is running.
    for (let tries = 0; tries < 100; tries++) {
      const [running] = (await own.query(`select count(*)::int as n from pg_stat_activity where state = 'active' and pid <> pg_backend_pid() and query like '%pg_sleep(1.5)%'`)) as { n: number }[];
      if (running.n > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const other = await openDatabase({ databaseUrl: own.url, poolSize: 1 });
    cleanups.push(() => other.close());
    const second = recorder();
    const waiting = runMigrations(other, own.url, { folder, log: second.log, noticeMs: 400, pollMs: 50 });
    const impatient = runMigrations(other, own.url, { folder, waitTimeoutMs: 300, pollMs: 50 });
    await expect(impatient).rejects.toThrow(MigrationWaitTimeout);
    await expect(impatient).rejects.toThrow(/gave up after waiting \d+ ms for another instance to finish migrating the database \(server process \d+.*pg_sleep/);
    expect((await migrating).applied).toEqual(["0000_fixture", "0001_fixture"]);
    expect((await waiting).applied).toEqual([]);
    expect(second.lines[0]).toMatch(/^waiting for another instance to finish migrating \(server process \d+ .*"latchkey migrations", running for \d+ s: SELECT pg_sleep\(1\.5\)/);
    expect(second.lines.slice(1, -1).length).toBeGreaterThanOrEqual(1);
    for (const line of second.lines.slice(1, -1)) expect(line).toMatch(/^still waiting for another instance to finish migrating: \d+(\.\d)? m?s so far \(/);
    expect(second.lines.at(-1)).toBe("another instance applied the migrations; nothing pending");
    expect(await own.query(`select count(*)::int as n from drizzle.__drizzle_migrations`)).toEqual([{ n: 2 }]);
  });

  it("a concurrent index build of the migrating instance completes while another instance waits (a session blocked on the lock would deadlock it)", async () => {
    const own = await ownPostgres();
    const folder = migrationFolder([
      `CREATE TABLE "t" ("v" integer);--> statement-breakpoint\nINSERT INTO "t" SELECT generate_series(1, 1000);--> statement-breakpoint\nSELECT pg_sleep(0.5);`,
      `${NO_TX}CREATE INDEX CONCURRENTLY IF NOT EXISTS "t_v_idx" ON "t" ("v");`,
    ]);
    let applying!: () => void;
    const started = new Promise<void>((resolve) => (applying = resolve));
    const migrating = runMigrations(own.handle, own.url, { folder, log: (line) => line.includes("applying") && applying() });
    await started;
    const other = await openDatabase({ databaseUrl: own.url, poolSize: 1 });
    cleanups.push(() => other.close());
    const waiting = runMigrations(other, own.url, { folder, pollMs: 20 });
    expect((await migrating).applied).toEqual(["0000_fixture", "0001_fixture"]);
    expect((await waiting).applied).toEqual([]);
    expect(await indexValid(own, "t_v_idx")).toBe(true);
  });

  it("gives up on a table another session holds (lock_timeout) instead of queueing every request behind it, tries again, and applies once it is free", async () => {
    const own = await ownPostgres();
    const folder = migrationFolder([`CREATE TABLE "t" ("v" integer);`, `ALTER TABLE "t" ADD COLUMN "w" text;`]);
    await own.migrate({ folder: migrationFolder([`CREATE TABLE "t" ("v" integer);`]) });
    const holder = postgres(own.url!, { max: 1, onnotice: () => {} });
    cleanups.push(() => holder.end({ timeout: 5 }));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const transaction = holder.begin(async (tx) => {
      await tx`select * from t`;
      locked();
      await held;
    });
    await isLocked;
    const { log, lines } = recorder();
    await expect(own.migrate({ folder, log, lockTimeoutMs: 200, lockAttempts: 2, lockRetryPauseMs: 50 })).rejects.toThrow(MigrationError);
    expect(lines[1]).toMatch(/^0001_fixture: a table it alters is held by another session \(lock timeout 200 ms\)\. Rolled back: 0001_fixture not applied; trying again in 50 ms \(attempt 2 of 2\)\.$/);
    expect(lines.at(-1)).toMatch(/^0001_fixture failed: .*lock timeout.*\(a table it alters was held by another session longer than the lock timeout\)/);
    release();
    await transaction;
    expect((await own.migrate({ folder })).applied).toEqual(["0001_fixture"]);
  });
});
