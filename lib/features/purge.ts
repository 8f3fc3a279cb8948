/**
 * The one purger: every feature's short-lived rows past their retention (the `retention` each
 * descriptor in FEATURES declares, lib/surfaces/retention.ts), deleted in the background. An
 * expired row answers exactly like a missing one everywhere, so it only costs: without the purge
 * the hottest tables and their indexes grow by every token ever issued, and every insert and lookup
 * with them. docs/operations.md lists what is kept and for how long.
 *
 * Rows are deleted in batches so no statement holds many row locks, rows another instance is
 * deleting are skipped rather than waited for, and only one instance purges at a time (a lease).
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { and, eq, inArray, lt, or, type SQL } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import { serviceSettings } from "../../db/schema";
import { MINUTE } from "../clock";
import type { Service } from "../service";
import type { Retention } from "../surfaces/retention";
import type { Feature } from "../surfaces/feature";
import { FEATURES } from "./registry";

export const PURGE_INTERVAL_MS = 5 * MINUTE;
const BATCH = 5_000;
/** Per declaration and run; the rest waits for the next run rather than keeping the database busy. */
const MAX_BATCHES = 20;

/** Every declaration, in the registry's order. */
export const RETENTION: readonly Retention[] = FEATURES.flatMap((f: Feature) => f.retention ?? []);

/**
 * Deletes the rows of `table` that `where` selects, BATCH at a time (no statement holds many row
 * locks) and at most MAX_BATCHES batches per run, skipping rows another instance is deleting.
 * Returns how many.
 */
async function deleteInBatches(db: Database, table: PgTable, key: PgColumn, where: SQL | undefined): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const batch = db.select({ key }).from(table).where(where).limit(BATCH).for("update", { skipLocked: true });
    // `where` again: a key shared with a row it does not select (a composite key's part) keeps that row.
    const deleted = await db.delete(table).where(and(where, inArray(key, batch))).returning({ key });
    total += deleted.length;
    if (deleted.length < BATCH) break;
  }
  return total;
}

/** The rows `r` lets go at `now` (of one workspace when given), or null when its setting keeps every row. */
function over(r: Retention, service: Pick<Service, "config">, now: Date, workspaceId: string | undefined): SQL | undefined | null {
  const grace = typeof r.grace === "function" ? r.grace(service.config) : r.grace;
  if (grace === null || grace === undefined) return null;
  const cutoff = new Date(now.getTime() - (r.lifetime ?? 0) - grace);
  const ends = Array.isArray(r.expiresAt) ? or(...(r.expiresAt as readonly PgColumn[]).map((c) => lt(c, cutoff))) : lt(r.expiresAt as PgColumn, cutoff);
  return and(r.where?.(now), ends, workspaceId === undefined ? undefined : eq(r.workspaceId!, workspaceId));
}

export interface PurgeOptions {
  /** Of one workspace (tests share one database between files): declarations without a workspace column are left out. Else every workspace. */
  workspaceId?: string;
  /** Only the declarations of these names (tests); an unknown name is an error. */
  names?: readonly string[];
}

/** Deletes every declared kind of row past its retention. Returns how many of each, by declaration name. */
export async function purgeRetained(service: Pick<Service, "db" | "clock" | "config">, options: PurgeOptions = {}): Promise<Record<string, number>> {
  const unknown = options.names?.filter((n) => !RETENTION.some((r) => r.name === n)) ?? [];
  if (unknown.length > 0) throw new Error(`no retention is declared as ${unknown.join(", ")}`);
  const now = service.clock.now();
  const counts: Record<string, number> = {};
  for (const r of RETENTION) {
    if (options.names && !options.names.includes(r.name)) continue;
    if (options.workspaceId !== undefined && !r.workspaceId) continue;
    const where = over(r, service, now, options.workspaceId);
    counts[r.name] = where === null ? 0 : await deleteInBatches(service.db, r.table, r.key, where);
  }
  return counts;
}

/** The service setting that records which instance holds the purge, and since when. */
const PURGE_LEASE = "purge.lease";
/** How long a taken lease keeps other instances from purging: less than an interval, so its holder renews it. */
export const PURGE_LEASE_MS = PURGE_INTERVAL_MS - MINUTE;

/**
 * Takes the purge for `holder` when no instance took it within PURGE_LEASE_MS (one atomic
 * upsert: of instances racing for it, exactly one gets it). True when taken.
 */
export async function takePurgeLease(service: Service, holder: string): Promise<boolean> {
  const now = service.clock.now();
  const taken = await service.db
    .insert(serviceSettings)
    .values({ key: PURGE_LEASE, value: holder, updatedAt: now })
    .onConflictDoUpdate({ target: serviceSettings.key, set: { value: holder, updatedAt: now }, setWhere: lt(serviceSettings.updatedAt, new Date(now.getTime() - PURGE_LEASE_MS)) })
    .returning({ key: serviceSettings.key });
  return taken.length === 1;
}

/** One purge run: every kind of row past its retention (docs/operations.md), on the instance holding the lease only. */
export async function runPurge(service: Service, holder: string): Promise<boolean> {
  if (!(await takePurgeLease(service, holder))) return false;
  await purgeRetained(service);
  return true;
}

/**
 * Runs the purge every PURGE_INTERVAL_MS (first run after one interval) on whichever instance
 * holds the lease; stop with the returned function.
 */
export function startPurge(service: Service): () => void {
  const holder = `${hostname()}:${process.pid}:${randomUUID()}`;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    runPurge(service, holder)
      .catch((error: Error) => console.warn(`[latchkey] expired row purge failed (retried in ${PURGE_INTERVAL_MS / MINUTE} min): ${error.message}`))
      .finally(() => {
        running = false;
      });
  }, PURGE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
