/**
 * The database's part of the domain metrics: an observer for the database client (db/client.ts
 * `DatabaseObserver`) that records statement and transaction timings, and keeps its pool's state
 * for `latchkey_db_pool_connections`. Each opened database gets its own; the service's is the one
 * the server opens (lib/service.ts).
 */
import type { DatabaseObserver } from "../../db/client";
import { holder, type PoolState } from "./index";

export function databaseObserver(): DatabaseObserver {
  const pool: PoolState = { max: 0, inUse: 0 };
  return {
    get enabled() {
      return holder.recorder !== null;
    },
    opened(max) {
      pool.max = max;
      holder.pools.add(pool);
    },
    held(change) {
      pool.inUse += change;
    },
    timed(kind, seconds) {
      holder.recorder?.databaseTiming(kind, seconds);
    },
    closed() {
      holder.pools.delete(pool);
    },
  };
}
