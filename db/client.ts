import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import type { PgDatabase } from "drizzle-orm/pg-core";
import postgres from "postgres";
import {
  applyMigrations,
  readMigrations,
  releaseMigrationLock,
  takeMigrationLock,
  type ApplyResult,
  type MigrationLog,
  type MigrationTarget,
  type Run,
} from "./migrator";
import * as schema from "./schema";

export type Database = PgDatabase<any, typeof schema>;

export interface DatabaseHandle {
  db: Database;
  kind: "pglite" | "postgres";
  close(): Promise<void>;
}

/**
 * Whoever watches the database (lib/signals/database.ts: its signals, which the metrics observe
 * when METRICS_PORT is set): how long each statement and each transaction took, and how many
 * connections are held. Per statement the
 * client only asks whether it is `enabled`; while it is not, nothing else is done or allocated.
 */
export interface DatabaseObserver {
  readonly enabled: boolean;
  /** The pool's size (1 for the embedded database), when the database opens. */
  opened(max: number): void;
  /** A connection taken (+1: by a statement outside a transaction, or by a transaction) or given back (-1). */
  held(change: 1 | -1): void;
  /** A statement, or a transaction from its BEGIN to its COMMIT or ROLLBACK, ended (either way) after `seconds`. */
  timed(kind: "statement" | "transaction", seconds: number): void;
  closed(): void;
}

/**
 * PostgreSQL settings of the embedded database in DATA_DIR (written to its postgresql.conf at each
 * start). PostgreSQL's default 128 MB of shared buffers is most of the process's memory in
 * WebAssembly, which never shrinks; 16 MB holds a development or small installation's working set
 * (the files are cached by the operating system underneath) and keeps ~100 MiB off the resident
 * memory of `npm start` (docs/performance.md).
 */
export const EMBEDDED_SERVER_SETTINGS = ["shared_buffers = 16MB"];

export const migrationsFolder = path.join(/*turbopackIgnore: true*/ process.cwd(), "db", "migrations");

export interface OpenOptions {
  databaseUrl?: string;
  /** Directory of the embedded database; omitted means in memory (tests). */
  dataDir?: string;
  poolSize?: number;
  observer?: DatabaseObserver;
  /** PostgreSQL: how long a statement may wait for a connection (default CONNECTION_WAIT_MS). */
  connectionWaitMs?: number;
  /** PostgreSQL: how long a statement may run (default STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs?: number;
}

/**
 * The bounds of every statement on PostgreSQL (docs/operations.md, "When the database is down").
 * A statement that has no connection after CONNECTION_WAIT_MS (the pool's connections all busy,
 * or the database not answering a new connection) fails; PostgreSQL cancels one that runs longer
 * than STATEMENT_TIMEOUT_MS (its `statement_timeout`, set per connection); a statement that has no
 * answer ANSWER_MARGIN_MS after that is on a connection that is gone without a word (a network
 * that drops packets, a proxy cut without a reset): it fails, and the pool is replaced.
 * Either failure is a dependency failure (503, lib/http/errors.ts).
 */
export const CONNECTION_WAIT_MS = 2000;
export const STATEMENT_TIMEOUT_MS = 5000;
const ANSWER_MARGIN_MS = 1000;
/** How often the bounds are checked: a bound is kept to within this much. */
const WATCH_INTERVAL_MS = 100;
/** Read-only sessions renew the pool at most this often (a database that stays read-only would otherwise renew it per write). */
const RENEW_INTERVAL_MS = 1000;

/** A statement that had no connection, or no answer, within its bound (lib/http/errors.ts counts it as a dependency failure). */
export class DatabaseTimeout extends Error {
  readonly code = "DATABASE_TIMEOUT";
  constructor(message: string) {
    super(message);
    this.name = "DatabaseTimeout";
  }
}

/**
 * The PostgreSQL connections of one server process unless DATABASE_POOL_SIZE says otherwise
 * (lib/config.ts). Few are faster: the driver pipelines statements on a busy connection, and fewer
 * busy backends share the cores with the server. On 2 cores with the database beside the server,
 * 2 or 4 connections answered the session and permission checks and client credentials 15-30 %
 * faster than 10 (docs/performance.md); 4 rather than 2 because a transaction holds its connection
 * alone, and a database across a network makes it hold it for several round trips.
 */
export const DEFAULT_POOL_SIZE = 4;

export async function openDatabase(options: OpenOptions): Promise<DatabaseHandle> {
  const { observer } = options;
  if (options.databaseUrl) {
    const max = options.poolSize ?? DEFAULT_POOL_SIZE;
    const pools = guardedPools(options.databaseUrl, {
      max,
      connectionWaitMs: options.connectionWaitMs ?? CONNECTION_WAIT_MS,
      statementTimeoutMs: options.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS,
      observer: observer ?? null,
    });
    const db = drizzlePostgres(pools.client, { schema }) as unknown as Database;
    guards.set(db, pools);
    observer?.opened(max);
    return {
      db,
      kind: "postgres",
      close: async () => {
        observer?.closed();
        await pools.end();
      },
    };
  }
  let release = () => {};
  let pglite: PGlite;
  if (options.dataDir) {
    const dir = path.join(options.dataDir, "pgdata");
    mkdirSync(options.dataDir, { recursive: true });
    release = lockDataDir(options.dataDir);
    pglite = new PGlite(dir, { postgresqlconf: EMBEDDED_SERVER_SETTINGS });
  } else {
    pglite = new PGlite();
  }
  await pglite.waitReady;
  if (observer) observePglite(pglite, observer);
  const db = drizzlePglite(pglite, { schema }) as unknown as Database;
  observer?.opened(1);
  return {
    db,
    kind: "pglite",
    close: async () => {
      observer?.closed();
      await pglite.close();
      release();
    },
  };
}

/**
 * Every statement as a named prepared statement, parsed and planned once per connection.
 * drizzle runs all but `.prepare()`d queries through `sql.unsafe(text, params, { prepare: false })`:
 * an unnamed statement that PostgreSQL re-plans on every execution, which costs more than the
 * execution itself for the multi-join authority reads (measured: ~5 ms of planning per refresh
 * rotation). postgres.js keys its statement cache by query text, and the query texts are fixed
 * (values are always parameters), so the cache stays small. Transactions get their own `sql`
 * from `begin` (and `savepoint`): those are wrapped too.
 *
 * The same wrapper times statements and transactions for `observer` while it is enabled
 * (`observed`; a statement inside a transaction holds no connection of its own), and hands every
 * statement (a transaction's BEGIN included) to `watch`, which bounds it (`guardedPools`).
 */
function preparedAndTimed<T extends postgres.Sql>(sql: T, observer: DatabaseObserver | null, watch: (statement: PromiseLike<unknown>) => void, inTransaction = false): T {
  const unsafe = sql.unsafe.bind(sql);
  const target = sql as unknown as Record<string, unknown>;
  // postgres.js sends a transaction's BEGIN through `sql.unsafe`, synchronously within `begin`:
  // it is part of the transaction's time and connection, not a statement of its own (as with PGlite).
  let beginning = false;
  target.unsafe = (query: string, params?: unknown[], options?: { prepare?: boolean }) => {
    const statement = unsafe(query, params as postgres.ParameterOrJSON<never>[], { ...options, prepare: true });
    watch(statement);
    if (observer?.enabled && !beginning) observed(statement, observer, "statement", !inTransaction);
    return statement;
  };
  for (const name of ["begin", "savepoint"] as const) {
    const original = target[name] as ((...args: unknown[]) => unknown) | undefined;
    if (typeof original !== "function") continue;
    target[name] = (...args: unknown[]) => {
      const last = args.length - 1;
      const fn = args[last];
      if (typeof fn === "function") args[last] = (tx: postgres.Sql) => (fn as (tx: postgres.Sql) => unknown)(preparedAndTimed(tx, observer, watch, true));
      if (name === "savepoint" || !observer?.enabled) return original.apply(sql, args);
      beginning = true;
      let transaction: Promise<unknown>;
      try {
        transaction = original.apply(sql, args) as Promise<unknown>;
      } finally {
        beginning = false;
      }
      observed(transaction, observer, "transaction", !inTransaction);
      return transaction;
    };
  }
  return sql;
}

interface PoolSettings {
  max: number;
  connectionWaitMs: number;
  statementTimeoutMs: number;
  observer: DatabaseObserver | null;
}

interface GuardedPools {
  /** What drizzle is given: every statement and transaction goes to the pool of the moment. */
  client: postgres.Sql;
  /** Replaces the pool: new statements get new connections; the old pool's end when their statements are done. */
  renew(why: "read-only" | "no answer"): void;
  end(): Promise<void>;
}

const guards = new WeakMap<Database, GuardedPools>();

/**
 * A session that reports itself read-only or in recovery (lib/http/health.ts) while the database
 * may since have become writable (a failover to a promoted standby, `default_transaction_read_only`
 * reset): its settings were fixed when it connected. The pool's sessions are replaced by new ones.
 */
export function renewConnections(db: Database): void {
  guards.get(db)?.renew("read-only");
}

/**
 * A postgres.js pool whose every statement is bounded (CONNECTION_WAIT_MS, STATEMENT_TIMEOUT_MS).
 * postgres.js itself bounds only the opening of a connection (`connect_timeout`): a statement
 * waits without bound in its queue (every connection busy, or reconnecting after a growing pause of
 * up to 20 s: the pause is capped here at half a second), and for ever on a connection whose peer
 * vanished without a reset (TCP keepalive does not notice a proxy that still answers for it).
 *
 * Each statement is noted with its start (one Map entry, removed when it settles); a watch every
 * WATCH_INTERVAL_MS fails the statements past their bound:
 * - not yet on a connection after `connectionWaitMs` while the database has answered nothing for
 *   as long (it refuses or ignores connections): it fails with DatabaseTimeout, and its text
 *   becomes `select 1` (a statement postgres.js still holds is sent when a connection opens: what
 *   the caller gave up on is never run, and the connection goes back to the pool as usual). While
 *   the database answers other statements, the pool is only busy (a burst, a slow machine): a
 *   statement waiting for its turn then fails only at the bound of a sent one, below;
 * - sent, and unanswered `statementTimeoutMs` + ANSWER_MARGIN_MS after it started (PostgreSQL
 *   cancels a statement at `statementTimeoutMs`, so a live connection has answered by then): it
 *   fails, and the pool is renewed, the old one ended within ANSWER_MARGIN_MS, failing what else
 *   waits on its dead connections.
 * A statement refused because its session is read-only (25006) also renews the pool (at most once
 * per RENEW_INTERVAL_MS): sessions opened while the database was read-only stay so.
 */
function guardedPools(url: string, settings: PoolSettings): GuardedPools {
  const { connectionWaitMs, statementTimeoutMs } = settings;
  const started = new Map<PostgresStatement, number>();
  const retiring = new Set<Promise<void>>();
  let renewedAt = -Infinity;
  /** When the database last answered a statement (a result or its own error), on any connection. */
  let answeredAt = -Infinity;

  const watch = (statement: PromiseLike<unknown>) => {
    const query = statement as PostgresStatement;
    started.set(query, performance.now());
    whenSettled.call(
      query,
      () => {
        started.delete(query);
        answeredAt = performance.now();
      },
      (error: unknown) => {
        started.delete(query);
        if ((error as { name?: unknown } | null)?.name !== "PostgresError") return;
        answeredAt = performance.now();
        if ((error as { code?: unknown }).code === "25006") renew("read-only");
      },
    );
  };

  const open = () =>
    preparedAndTimed(
      postgres(url, {
        max: settings.max,
        onnotice: () => {},
        // Seconds; a connection not open within the wait is abandoned (its socket closed).
        connect_timeout: connectionWaitMs / 1000,
        idle_timeout: 60,
        backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 0.5),
        connection: { statement_timeout: statementTimeoutMs },
        // No array-type lookup on each new connection: no column, parameter or result is a
        // PostgreSQL array (lists are jsonb or json_agg), and that lookup's failure, when the server
        // goes away while a connection opens, was an unhandled rejection outside any request
        // (seen in tests/integration/fail-closed.test.ts).
        fetch_types: false,
      }),
      settings.observer,
      watch,
    );

  const first = open();
  let current = first;

  function renew(why: "read-only" | "no answer"): void {
    const now = performance.now();
    if (now - renewedAt < RENEW_INTERVAL_MS) return;
    renewedAt = now;
    const old = current;
    current = open();
    // drizzle set its parsers on the first pool's options (drizzle-orm/postgres-js/driver.js).
    Object.assign(current.options.parsers, first.options.parsers);
    Object.assign(current.options.serializers, first.options.serializers);
    const ending = old.end({ timeout: (why === "no answer" ? ANSWER_MARGIN_MS : statementTimeoutMs) / 1000 }).catch(() => {});
    retiring.add(ending);
    void ending.then(() => retiring.delete(ending));
  }

  const timer = setInterval(() => {
    const now = performance.now();
    for (const [query, at] of started) {
      const waited = now - at;
      // Oldest first (a Map keeps insertion order): the rest are younger.
      if (waited < connectionWaitMs) break;
      if (!query.state) {
        // The database answered another statement within the wait: the pool is busy, not cut off.
        // A statement waiting for its turn then has the bound of one that was sent.
        if (now - answeredAt < connectionWaitMs && waited < statementTimeoutMs + ANSWER_MARGIN_MS) continue;
        started.delete(query);
        Object.assign(query, { strings: ["select 1"], args: [], options: { simple: true, prepare: false } });
        query.reject(new DatabaseTimeout(`no database connection within ${connectionWaitMs} ms`));
      } else if (waited >= statementTimeoutMs + ANSWER_MARGIN_MS) {
        started.delete(query);
        query.reject(new DatabaseTimeout(`no answer from the database within ${statementTimeoutMs + ANSWER_MARGIN_MS} ms`));
        if (at > renewedAt) renew("no answer");
      }
    }
  }, WATCH_INTERVAL_MS);
  timer.unref();

  const client = {
    get options() {
      return first.options;
    },
    unsafe: (...args: Parameters<postgres.Sql["unsafe"]>) => current.unsafe(...args),
    begin: (...args: unknown[]) => (current.begin as (...a: unknown[]) => unknown)(...args),
  } as unknown as postgres.Sql;

  return {
    client,
    renew,
    async end() {
      clearInterval(timer);
      await Promise.all([current.end({ timeout: 5 }), ...retiring]);
    },
  };
}

/** The parts of a postgres.js query (src/query.js) the bounds use: its connection's state once sent, and its own reject. */
interface PostgresStatement extends PromiseLike<unknown> {
  state: unknown;
  reject(error: unknown): void;
}

// The native `then`: a postgres.js query is a Promise whose own `then` starts it; this one only
// waits for it (drizzle starts it, after choosing its result format).
const whenSettled = Promise.prototype.then;

/**
 * Times `work` from now until it settles, holding a connection meanwhile when `holds`: two clock
 * reads, one callback and the promise `then` makes, per statement.
 */
function observed(work: PromiseLike<unknown>, observer: DatabaseObserver, kind: "statement" | "transaction", holds: boolean): void {
  const start = performance.now();
  if (holds) observer.held(1);
  const end = () => {
    observer.timed(kind, (performance.now() - start) / 1000);
    if (holds) observer.held(-1);
  };
  whenSettled.call(work, end, end);
}

/** The embedded database's statements and transactions, timed for `observer` while it is enabled (one connection: max 1). */
function observePglite(pglite: PGlite, observer: DatabaseObserver): void {
  const target = pglite as unknown as Record<string, unknown>;
  const query = pglite.query.bind(pglite);
  const transaction = pglite.transaction.bind(pglite);
  target.query = (...args: Parameters<PGlite["query"]>) => {
    const result = query(...args);
    if (observer.enabled) observed(result, observer, "statement", true);
    return result;
  };
  target.transaction = (fn: Parameters<PGlite["transaction"]>[0]) => {
    if (!observer.enabled) return transaction(fn);
    const result = transaction((tx) => {
      const inner = tx.query.bind(tx);
      (tx as unknown as Record<string, unknown>).query = (...args: Parameters<typeof tx.query>) => {
        const statement = inner(...args);
        if (observer.enabled) observed(statement, observer, "statement", false);
        return statement;
      };
      return fn(tx);
    });
    observed(result, observer, "transaction", true);
    return result;
  };
}

/** The embedded database is single-process: refuse a second opener instead of corrupting it. */
function lockDataDir(dataDir: string): () => void {
  const lock = path.join(dataDir, "embedded.lock");
  if (existsSync(lock)) {
    const pid = Number(readFileSync(lock, "utf8").trim());
    if (pid && pid !== process.pid && isAlive(pid)) {
      throw new Error(
        `The embedded database in ${dataDir} is in use by process ${pid}. Stop it first, or set DATABASE_URL to share a PostgreSQL server.`,
      );
    }
  }
  writeFileSync(lock, String(process.pid));
  return () => rmSync(lock, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface MigrateOptions {
  /** What is being done, line by line: pending migrations, each one's time, waiting for another instance (default: nothing). */
  log?: MigrationLog;
  /** PostgreSQL: give up waiting for another instance's migration after this long (default 30 minutes; 0: no bound). */
  waitTimeoutMs?: number;
  /** PostgreSQL: how often a waiting instance says so (default 30 s) and tries the lock (default 0.5 s). */
  noticeMs?: number;
  pollMs?: number;
  /** PostgreSQL: lock_timeout of transactional migrations (default 5 s), tried `lockAttempts` times (default 5). */
  lockTimeoutMs?: number;
  lockAttempts?: number;
  lockRetryPauseMs?: number;
  /** Another drizzle-kit folder (tests). */
  folder?: string;
}

/**
 * Applies the pending migrations (db/migrator.ts). On PostgreSQL, on a session of its own that
 * holds the migration lock: instances starting together migrate one after the other, and the
 * later ones find nothing pending.
 */
export async function runMigrations(handle: DatabaseHandle, databaseUrl?: string, options: MigrateOptions = {}): Promise<ApplyResult> {
  const migrations = readMigrations(options.folder ?? migrationsFolder);
  if (handle.kind === "pglite") {
    const pglite = (handle.db as unknown as { $client: PGlite }).$client;
    const run = (on: Pick<PGlite, "query" | "exec">): Run => async (text, params) =>
      params ? (await on.query<Record<string, unknown>>(text, params)).rows : (await on.exec(text)).flatMap((result) => result.rows as Record<string, unknown>[]);
    const target: MigrationTarget = { run: run(pglite), transaction: (fn) => pglite.transaction((tx) => fn(run(tx))) };
    return applyMigrations(target, migrations, options.log);
  }
  if (!databaseUrl) throw new Error("runMigrations needs the database URL for PostgreSQL");
  const client = postgres(databaseUrl, { max: 1, onnotice: () => {}, connect_timeout: 10, connection: { application_name: "latchkey migrations" } });
  const run = (on: postgres.Sql | postgres.TransactionSql): Run => async (text, params) => [...(await on.unsafe<Record<string, unknown>[]>(text, (params ?? []) as postgres.ParameterOrJSON<never>[]))];
  try {
    const waited = await takeMigrationLock(run(client), { log: options.log, waitTimeoutMs: options.waitTimeoutMs, noticeMs: options.noticeMs, pollMs: options.pollMs });
    try {
      const target: MigrationTarget = {
        run: run(client),
        transaction: (fn) => client.begin((tx) => fn(run(tx))) as Promise<never>,
        lockTimeoutMs: options.lockTimeoutMs ?? 5000,
        lockAttempts: options.lockAttempts ?? 5,
        lockRetryPauseMs: options.lockRetryPauseMs,
      };
      const result = await applyMigrations(target, migrations, options.log);
      if (waited > 0 && result.applied.length === 0) options.log?.("another instance applied the migrations; nothing pending");
      return result;
    } finally {
      await releaseMigrationLock(run(client)).catch(() => {});
    }
  } finally {
    await client.end({ timeout: 5 });
  }
}
