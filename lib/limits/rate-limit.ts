import { createHash } from "node:crypto";
import { inArray, lt, sql } from "drizzle-orm";
import { rateLimits } from "../../db/schema";
import type { Database } from "../../db/client";
import { HOUR, type Clock } from "../clock";
import { isStorableText } from "../text";

interface Counter {
  windowStart: number;
  windowEnd: number;
  /** The limit the counter was last asked about, so eviction can tell who it is blocking. */
  limit: number;
  /** The shared count as the database last reported it (all instances). */
  shared: number;
  /** Hits counted here and not yet added to the database. */
  pending: number;
  /** Hits on their way to the database (a sync in flight): counted until its answer includes them. */
  sending: number;
  lastSync: number;
  syncing: Promise<void> | null;
}

export interface Decision {
  allowed: boolean;
  retryAfterSeconds: number;
}

const SYNC_INTERVAL_MS = 250;

/** What the counter holds for its window: the shared count, hits on their way to it, and hits not sent yet. */
const counted = (c: Counter) => c.shared + c.sending + c.pending;
/** Keys are often built from client text (client ids, emails): longer ones are kept as a digest. */
export const MAX_KEY_LENGTH = 128;
/**
 * The longest window a limit may count over. Rows of windows that began longer ago than this have
 * ended whatever their limit, and the background purge deletes them (`RATE_LIMITS`).
 */
export const MAX_WINDOW_MS = HOUR;
/** Counters held in memory; the database keeps every count, so a dropped counter only resyncs. */
export const MAX_ENTRIES = 20_000;
/** Eviction frees down to this, so its scan is paid once per 2,000 new keys, not per key. */
const LOW_WATER = MAX_ENTRIES - MAX_ENTRIES / 10;

/**
 * The key as held in memory and stored in `rate_limits.key`: itself when short and storable,
 * otherwise its readable prefix (`authfail:`) and SHA-256, so neither memory nor rows grow with
 * what a client sends.
 */
export function limiterKey(key: string): string {
  if (key.length <= MAX_KEY_LENGTH && isStorableText(key)) return key;
  const prefix = /^[a-z-]{1,24}:/.exec(key)?.[0] ?? "";
  return `${prefix}sha256:${createHash("sha256").update(key).digest("base64url")}`;
}

/**
 * Fixed-window counters whose state lives in the `rate_limits` table, so a limit holds across
 * several instances of the service. Each instance decides from the last shared count plus its
 * own hits not in it yet (those not sent, and those of a sync still waiting for its answer) and adds those to the database in the background at most every 250 ms per
 * key, so the hot path never waits for the limiter. Failures (`recordFailure`) sync at once.
 *
 * Memory is bounded whatever the keys: at most MAX_ENTRIES counters of keys of at most
 * MAX_KEY_LENGTH characters. A new counter syncs at once, so a dropped one comes back with the
 * shared count; eviction drops ended windows first, then counters that block nobody, and only
 * then (the oldest) counters at their limit, so a stream of new keys does not free a key that
 * is being throttled.
 */
export class RateLimiter {
  private counters = new Map<string, Counter>();

  constructor(
    private db: Database,
    private clock: Clock,
  ) {}

  /** Counters held in memory. */
  get size(): number {
    return this.counters.size;
  }

  private counter(key: string, limit: number, windowMs: number): Counter {
    if (windowMs > MAX_WINDOW_MS) throw new Error(`${key}: a limit's window is at most ${MAX_WINDOW_MS / HOUR} hour (the purge deletes older rows)`);
    const now = this.clock.now().getTime();
    const windowStart = now - (now % windowMs);
    let c = this.counters.get(key);
    if (c && c.windowStart === windowStart) {
      c.limit = limit;
      return c;
    }
    if (c) this.counters.delete(key); // re-inserted last: eviction goes oldest window first
    else if (this.counters.size >= MAX_ENTRIES) this.makeRoom(now);
    c = { windowStart, windowEnd: windowStart + windowMs, limit, shared: 0, pending: 0, sending: 0, lastSync: 0, syncing: null };
    this.counters.set(key, c);
    return c;
  }

  /** The current window's counter for `key`, if one is held; never creates one. */
  private current(key: string, windowMs: number): Counter | undefined {
    const c = this.counters.get(key);
    if (!c) return undefined;
    const now = this.clock.now().getTime();
    return c.windowStart === now - (now % windowMs) ? c : undefined;
  }

  private makeRoom(now: number) {
    const reached = (c: Counter) => counted(c) >= c.limit;
    const busy = (c: Counter) => c.pending > 0 || c.syncing !== null;
    for (const [key, c] of this.counters) if (c.windowEnd <= now && !busy(c)) this.counters.delete(key);
    for (const [key, c] of this.counters) {
      if (this.counters.size <= LOW_WATER) return;
      if (!reached(c) && !busy(c)) this.counters.delete(key);
    }
    for (const [key, c] of this.counters) {
      if (this.counters.size <= LOW_WATER) return;
      if (c.pending > 0) void this.sync(key, c);
      this.counters.delete(key);
    }
  }

  private retryAfter(c: Counter): number {
    return Math.max(1, Math.ceil((c.windowEnd - this.clock.now().getTime()) / 1000));
  }

  /** Counts one request against `limit` per window; `limit` 0 means unlimited. */
  hit(key: string, limit: number, windowMs: number): Decision {
    if (limit <= 0) return { allowed: true, retryAfterSeconds: 0 };
    const k = limiterKey(key);
    const c = this.counter(k, limit, windowMs);
    if (counted(c) >= limit) return { allowed: false, retryAfterSeconds: this.retryAfter(c) };
    c.pending++;
    if (!c.syncing && this.clock.now().getTime() - c.lastSync >= SYNC_INTERVAL_MS) void this.sync(k, c);
    return { allowed: true, retryAfterSeconds: 0 };
  }

  /** Whether `key` has reached `limit` in the current window, without counting (and without holding anything new). */
  blocked(key: string, limit: number, windowMs: number): Decision {
    if (limit <= 0) return { allowed: true, retryAfterSeconds: 0 };
    const c = this.current(limiterKey(key), windowMs);
    return c && counted(c) >= limit ? { allowed: false, retryAfterSeconds: this.retryAfter(c) } : { allowed: true, retryAfterSeconds: 0 };
  }

  /** Counts a failure and waits for the shared count, so other instances see it at once. */
  async recordFailure(key: string, limit: number, windowMs: number): Promise<void> {
    if (limit <= 0) return;
    const k = limiterKey(key);
    const c = this.counter(k, limit, windowMs);
    c.pending++;
    await this.sync(k, c);
  }

  /**
   * Reads the shared count of each of `counters` for its current window, so that a decision made
   * next counts what other instances added since this one last synced the key (a guess answered
   * by another instance a moment ago). One query for all of them. Never throws: the limiter is
   * not an authority, and without the database it decides from what it holds.
   */
  async refresh(counters: readonly { key: string; limit: number; windowMs: number }[]): Promise<void> {
    const active = counters.filter((c) => c.limit > 0);
    if (active.length === 0) return;
    const held = active.map((c) => {
      const key = limiterKey(c.key);
      return { key, counter: this.counter(key, c.limit, c.windowMs) };
    });
    let rows: { key: string; windowStart: Date; count: number }[];
    try {
      rows = await this.db
        .select({ key: rateLimits.key, windowStart: rateLimits.windowStart, count: rateLimits.count })
        .from(rateLimits)
        .where(inArray(rateLimits.key, [...new Set(held.map((h) => h.key))]));
    } catch {
      return;
    }
    const byKey = new Map(rows.map((r) => [r.key, r]));
    for (const { key, counter } of held) {
      const row = byKey.get(key);
      // A sync answered meanwhile may already hold a newer total; a count never goes down within its window.
      if (row && row.windowStart.getTime() === counter.windowStart) counter.shared = Math.max(counter.shared, row.count);
    }
  }

  /** Adds pending hits to the shared row and reads the total back. Never throws. */
  sync(key: string, c: Counter): Promise<void> {
    if (c.syncing) return c.syncing.then(() => (c.pending > 0 ? this.sync(key, c) : undefined));
    const add = c.pending;
    c.pending = 0;
    c.sending += add;
    c.lastSync = this.clock.now().getTime();
    const windowStart = new Date(c.windowStart);
    c.syncing = this.db
      .insert(rateLimits)
      .values({ key, windowStart, count: add })
      .onConflictDoUpdate({
        target: rateLimits.key,
        set: {
          count: sql`case when ${rateLimits.windowStart} = excluded.window_start then ${rateLimits.count} + excluded.count else excluded.count end`,
          windowStart: sql`excluded.window_start`,
        },
      })
      .returning({ count: rateLimits.count })
      .then(
        ([row]) => {
          // The answer includes what was sent: from now on it is in the shared count.
          c.sending -= add;
          if (row) c.shared = row.count;
          else c.shared += add;
        },
        () => {
          // The limiter is not an authority: if the database is away, keep counting locally.
          c.sending -= add;
          c.shared += add;
        },
      )
      .finally(() => {
        c.syncing = null;
      });
    return c.syncing;
  }

  /** Waits for every background sync (tests, shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.counters].map(([key, c]) => (c.pending > 0 || c.syncing ? this.sync(key, c) : undefined)));
  }
}

/**
 * The counters of ended windows are deleted by the one purger (lib/features/purge.ts): a row whose
 * window began more than MAX_WINDOW_MS ago counts for no limit any more. Not done on the counting
 * path, and never by a test's clock on a database other test files share (the rows belong to no
 * workspace). lib/limits sits below lib/surfaces, so this is a plain value of the shape of a
 * `Retention` (lib/surfaces/retention.ts), checked against that type where the registry of features
 * lists it (lib/features/registry.ts).
 */
export const RATE_LIMITS = {
  name: "rate_limits",
  table: rateLimits,
  key: rateLimits.key,
  expiresAt: rateLimits.windowStart,
  grace: MAX_WINDOW_MS,
};
