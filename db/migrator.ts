/**
 * Applies the migrations of db/migrations, compatibly with drizzle-orm's migrator
 * (drizzle-orm/pg-core/dialect.js `migrate`): the same record table
 * (`drizzle.__drizzle_migrations`: hash = SHA-256 of the file, created_at = the journal's `when`),
 * the same rule for what is pending (every migration whose `when` is later than the newest
 * recorded `created_at`; recorded hashes are never compared again), and consecutive pending
 * migrations in one transaction. What it adds:
 *
 * - A migration whose first line is `-- latchkey:no-transaction` runs outside any transaction,
 *   statement by statement (CREATE INDEX CONCURRENTLY cannot run in one), and is recorded once
 *   its statements are done. Its statements are `CREATE INDEX CONCURRENTLY IF NOT EXISTS` and
 *   `DROP INDEX CONCURRENTLY IF EXISTS` (scripts/check-migrations.ts), so running it again after
 *   a crash is safe; an index left INVALID by an interrupted concurrent build is dropped and
 *   built again.
 * - On PostgreSQL, instances starting together take turns (an advisory lock, tried every half
 *   second rather than waited on: a session blocked in pg_advisory_lock holds a snapshot, and a
 *   concurrent index build of the instance that migrates would wait for it, a deadlock). The one
 *   that waits says so, and what the migrating session is doing, and gives up after a bound.
 * - What it does is reported through `log`: the pending migrations, the time each took, done.
 *
 * Operators' side: docs/operations.md, "Upgrades".
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";

/** First line of a migration that runs outside a transaction. */
export const NO_TRANSACTION_MARKER = "-- latchkey:no-transaction";

/** drizzle-kit's separator between the statements of a migration file. */
export const STATEMENT_BREAKPOINT = "--> statement-breakpoint";

/** Serializes migrators across processes that share one PostgreSQL database (pg_locks: classid 0, objid this, objsubid 1). */
export const MIGRATION_LOCK = 7_264_001;

export interface Migration {
  /** Position in the journal. */
  idx: number;
  /** File name without `.sql`, e.g. `0021_launch_expiry_index`. */
  tag: string;
  /** The journal's `when`: recorded as `created_at`, and what "pending" is decided by. */
  when: number;
  /** SHA-256 of the file's text, as drizzle computes and records it. */
  hash: string;
  /** The file split at drizzle-kit's breakpoints, as drizzle runs it. */
  statements: string[];
  /** The file starts with NO_TRANSACTION_MARKER. */
  noTransaction: boolean;
}

interface Journal {
  entries: { idx: number; tag: string; when: number }[];
}

/** The migrations of a drizzle-kit folder (its meta/_journal.json and one .sql file per entry), in journal order. */
export function readMigrations(folder: string): Migration[] {
  const journal = JSON.parse(readFileSync(path.join(folder, "meta", "_journal.json"), "utf8")) as Journal;
  return journal.entries.map((entry) => {
    const text = readFileSync(path.join(folder, `${entry.tag}.sql`), "utf8");
    return {
      idx: entry.idx,
      tag: entry.tag,
      when: entry.when,
      hash: createHash("sha256").update(text).digest("hex"),
      statements: text.split(STATEMENT_BREAKPOINT).filter((statement) => statement.trim() !== ""),
      noTransaction: isNoTransaction(text),
    };
  });
}

export function isNoTransaction(text: string): boolean {
  return text.replace(/^\uFEFF/, "").split("\n", 1)[0]!.trim() === NO_TRANSACTION_MARKER;
}

type Row = Record<string, unknown>;
export type Run = (text: string, params?: unknown[]) => Promise<Row[]>;

/** Where migrations are applied: one session of PostgreSQL or PGlite. */
export interface MigrationTarget {
  /** One statement (or a breakpoint's chunk) outside any transaction. */
  run: Run;
  /** `fn` inside one transaction, committed when it resolves. */
  transaction<T>(fn: (run: Run) => Promise<T>): Promise<T>;
  /** PostgreSQL: lock_timeout for the statements of transactional migrations (not for PGlite: a single session). */
  lockTimeoutMs?: number;
  /** Attempts of a transactional group that ran into lock_timeout (default 1), `lockRetryPauseMs` apart. */
  lockAttempts?: number;
  lockRetryPauseMs?: number;
}

export interface ApplyResult {
  /** Tags of the migrations this call applied, in order. */
  applied: string[];
}

export type MigrationLog = (line: string) => void;

const TABLE = `"drizzle"."__drizzle_migrations"`;

/** Applies the pending migrations to `target`, which the caller holds alone (the lock, or PGlite's single session). */
export async function applyMigrations(target: MigrationTarget, migrations: Migration[], log: MigrationLog = () => {}): Promise<ApplyResult> {
  // drizzle's own statements, so that either migrator finds what the other made.
  await target.run(`CREATE SCHEMA IF NOT EXISTS "drizzle"`);
  await target.run(`CREATE TABLE IF NOT EXISTS ${TABLE} (
				id SERIAL PRIMARY KEY,
				hash text NOT NULL,
				created_at bigint
			)`);
  const [last] = await target.run(`select id, hash, created_at from ${TABLE} order by created_at desc limit 1`);
  const pending = migrations.filter((migration) => !last || Number(last.created_at) < migration.when);
  if (pending.length === 0) return { applied: [] };

  const started = performance.now();
  // A new database gets every migration: one line for all of them, not one per migration.
  const fresh = !last;
  const each: MigrationLog = fresh ? () => {} : log;
  if (fresh) log(`new database: applying ${pending.length} migrations…`);
  else log(`${pending.length} database migration${pending.length === 1 ? "" : "s"} pending: ${pending.map((m) => m.tag).join(", ")}; applying…`);
  const applied: string[] = [];
  for (const group of batches(pending)) {
    if (group[0]!.noTransaction) {
      const migration = group[0]!;
      const began = performance.now();
      try {
        for (const statement of migration.statements) await runOutsideTransaction(target.run, statement, migration, log);
        await record(target.run, migration);
      } catch (error) {
        log(`${migration.tag} failed: ${message(error)}. It runs outside a transaction: what it built is kept; the next start runs it again (its statements are IF NOT EXISTS / IF EXISTS, and an index left invalid is built again).`);
        throw new MigrationError(migration.tag, error);
      }
      applied.push(migration.tag);
      each(`  ${migration.tag} (outside a transaction): ${duration(performance.now() - began)}`);
      continue;
    }
    const attempts = Math.max(1, target.lockAttempts ?? 1);
    for (let attempt = 1; ; attempt++) {
      let current = group[0]!;
      try {
        await target.transaction(async (run) => {
          // Waiting for a table's lock behind a long transaction would queue every request on that
          // table behind this one: give up instead, and try again a little later.
          if (target.lockTimeoutMs) await run(`set local lock_timeout = ${Math.round(target.lockTimeoutMs)}`);
          for (const migration of group) {
            current = migration;
            const began = performance.now();
            for (const statement of migration.statements) await run(statement);
            await record(run, migration);
            each(`  ${migration.tag}: ${duration(performance.now() - began)}`);
          }
        });
        break;
      } catch (error) {
        const lockTimeout = sqlState(error) === "55P03";
        const rolledBack = `Rolled back: ${group.map((m) => m.tag).join(", ")} not applied`;
        if (lockTimeout && attempt < attempts) {
          const pause = target.lockRetryPauseMs ?? 5000;
          log(`${current.tag}: a table it alters is held by another session (lock timeout ${duration(target.lockTimeoutMs ?? 0)}). ${rolledBack}; trying again in ${duration(pause)} (attempt ${attempt + 1} of ${attempts}).`);
          await new Promise((resolve) => setTimeout(resolve, pause));
          continue;
        }
        log(`${current.tag} failed: ${message(error)}${lockTimeout ? " (a table it alters was held by another session longer than the lock timeout)" : ""}. ${rolledBack}.`);
        throw new MigrationError(current.tag, error);
      }
    }
    applied.push(...group.map((m) => m.tag));
  }
  log(`migrations done: ${applied.length} applied in ${duration(performance.now() - started)}`);
  return { applied };
}

/** Consecutive transactional migrations together (one transaction, as drizzle); each no-transaction migration alone. */
function batches(pending: Migration[]): Migration[][] {
  const groups: Migration[][] = [];
  for (const migration of pending) {
    const open = groups.at(-1);
    if (migration.noTransaction || !open || open[0]!.noTransaction) groups.push([migration]);
    else open.push(migration);
  }
  return groups;
}

async function record(run: Run, migration: Migration): Promise<void> {
  await run(`insert into ${TABLE} ("hash", "created_at") values ($1, $2)`, [migration.hash, migration.when]);
}

const IDENTIFIER = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)`;
const CONCURRENT_INDEX = new RegExp(String.raw`^\s*create\s+(?:unique\s+)?index\s+concurrently\s+if\s+not\s+exists\s+(${IDENTIFIER}(?:\s*\.\s*${IDENTIFIER})?)`, "i");

/** The index a `CREATE [UNIQUE] INDEX CONCURRENTLY IF NOT EXISTS` statement builds, as written (quoted, maybe schema-qualified). */
export function concurrentIndexName(statement: string): string | null {
  const match = CONCURRENT_INDEX.exec(withoutComments(statement));
  return match ? match[1]!.replace(/\s+/g, "") : null;
}

async function runOutsideTransaction(run: Run, statement: string, migration: Migration, log: MigrationLog): Promise<void> {
  const index = concurrentIndexName(statement);
  if (index) {
    // A concurrent build that failed or was interrupted leaves the index in place, INVALID (unused
    // by queries, still maintained by writes): IF NOT EXISTS would keep it. Drop it and build again.
    const [row] = await run(`select i.indisvalid as valid from pg_index i where i.indexrelid = to_regclass($1)`, [index]);
    if (row && row.valid === false) {
      log(`  ${migration.tag}: index ${index} was left invalid by an interrupted build; dropping it to build it again`);
      await run(`DROP INDEX CONCURRENTLY IF EXISTS ${index}`);
    }
  }
  await run(statement);
}

/** The statement without `--` and `/* *\/` comments (enough to read its first words). */
export function withoutComments(statement: string): string {
  return statement.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/--[^\n]*/g, " ");
}

export class MigrationError extends Error {
  constructor(
    readonly tag: string,
    cause: unknown,
  ) {
    super(`database migration ${tag} failed: ${message(cause)}`, { cause });
    this.name = "MigrationError";
  }
}

export class MigrationWaitTimeout extends Error {
  constructor(waitedMs: number, holder: string) {
    super(
      `gave up after waiting ${duration(waitedMs)} for another instance to finish migrating the database (${holder}). Start again once it is done, or raise MIGRATION_WAIT_TIMEOUT.`,
    );
    this.name = "MigrationWaitTimeout";
  }
}

export interface LockWaitOptions {
  log?: MigrationLog;
  /** Give up after this long (0: wait as long as it takes). */
  waitTimeoutMs?: number;
  /** How often the lock is tried. */
  pollMs?: number;
  /** How often a waiting instance says it is still waiting. */
  noticeMs?: number;
}

/** Defaults of LockWaitOptions: the bound (MIGRATION_WAIT_TIMEOUT's default), the poll and the notice interval. */
export const LOCK_WAIT_DEFAULTS = { waitTimeoutMs: 30 * 60_000, pollMs: 500, noticeMs: 30_000 };

/**
 * Takes the migration lock for this session, trying every `pollMs`; while another session holds
 * it, says so at once and every `noticeMs`, naming what that session is doing. Returns how long it
 * waited: 0 when the lock was free.
 */
export async function takeMigrationLock(run: Run, options: LockWaitOptions = {}): Promise<number> {
  const { waitTimeoutMs, pollMs, noticeMs } = { ...LOCK_WAIT_DEFAULTS, ...definedOnly(options) };
  const log = options.log ?? (() => {});
  const started = Date.now();
  let nextNotice = 0;
  for (let tries = 0; ; tries++) {
    const [row] = await run(`select pg_try_advisory_lock(${MIGRATION_LOCK}) as locked`);
    if (row?.locked === true) return tries === 0 ? 0 : Date.now() - started;
    const waited = Date.now() - started;
    if (waitTimeoutMs > 0 && waited >= waitTimeoutMs) throw new MigrationWaitTimeout(waited, await lockHolder(run));
    if (waited >= nextNotice) {
      const holder = await lockHolder(run);
      log(nextNotice === 0 ? `waiting for another instance to finish migrating (${holder})` : `still waiting for another instance to finish migrating: ${duration(waited)} so far (${holder})`);
      nextNotice = waited + noticeMs;
    }
    const remaining = waitTimeoutMs > 0 ? waitTimeoutMs - waited : pollMs;
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(pollMs, remaining))));
  }
}

export async function releaseMigrationLock(run: Run): Promise<void> {
  await run(`select pg_advisory_unlock(${MIGRATION_LOCK})`);
}

/** The session holding the migration lock: its process, address and current statement, as far as this role may see them. */
async function lockHolder(run: Run): Promise<string> {
  try {
    const [row] = await run(
      `select a.pid, host(a.client_addr) as addr, a.application_name as app, a.state, left(btrim(regexp_replace(a.query, '\\s+', ' ', 'g')), 120) as query,
              extract(epoch from now() - a.query_start)::int as seconds
         from pg_locks l left join pg_stat_activity a on a.pid = l.pid
        where l.locktype = 'advisory' and l.granted and l.classid = 0 and l.objid = ${MIGRATION_LOCK} and l.objsubid = 1
          and l.database = (select oid from pg_database where datname = current_database())
        limit 1`,
    );
    if (!row) return "it has just finished";
    const who = [`server process ${row.pid}`, row.addr ? `from ${row.addr as string}` : null, row.app ? `"${row.app as string}"` : null].filter(Boolean).join(" ");
    if (typeof row.query !== "string" || row.query === "" || row.query.startsWith("<insufficient")) return who;
    const what = row.state === "active" ? `running for ${row.seconds as number} s: ${row.query}` : `${row.state as string}, last: ${row.query}`;
    return `${who}, ${what}`;
  } catch {
    return "holder unknown";
  }
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;
}

function sqlState(error: unknown): string | undefined {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 3; e = e.cause as typeof e, depth++) {
    if (typeof e.code === "string") return e.code;
  }
  return undefined;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
