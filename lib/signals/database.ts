/**
 * The database's signals: the observer the service opens its database with (db/client.ts
 * `DatabaseObserver`, lib/service.ts). Each statement and each transaction is signalled as
 * `database_timed` while that signal is observed (per statement the client only asks `enabled`:
 * while nobody observes, nothing else is done or allocated). Each open database's pool is kept in
 * one process-wide set (`databasePools`): its size, and the connections held now, counted while
 * the statements are observed; a watcher reads it when it needs to (the metrics, at each scrape).
 */
import type { DatabaseObserver } from "../../db/client";
import { observed, signal } from "./index";

/** An open database's pool: its size (1 for the embedded database) and the connections its statements and transactions hold now. */
export interface DatabasePool {
  max: number;
  inUse: number;
}

const KEY = Symbol.for("latchkey.signals.database-pools");
const scope = globalThis as Record<symbol, unknown>;
/** Shared by every copy of this module in the process (./index.ts). */
const pools: Set<DatabasePool> = (scope[KEY] as Set<DatabasePool> | undefined) ?? (scope[KEY] = new Set<DatabasePool>());

/** The pools of the databases open in this process now. */
export function databasePools(): ReadonlySet<DatabasePool> {
  return pools;
}

/** An observer for one database: its statements' signals, and its pool in `databasePools` while it is open. */
export function databaseSignals(): DatabaseObserver {
  const pool: DatabasePool = { max: 0, inUse: 0 };
  return {
    get enabled() {
      return observed("database_timed");
    },
    opened(max) {
      pool.max = max;
      pools.add(pool);
    },
    held(change) {
      pool.inUse += change;
    },
    timed(kind, seconds) {
      signal("database_timed", { kind, seconds });
    },
    closed() {
      pools.delete(pool);
    },
  };
}
