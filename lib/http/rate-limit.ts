import { lt, sql } from "drizzle-orm";
import { rateLimits } from "../../db/schema";
import type { Database } from "../../db/client";
import type { Clock } from "../clock";

interface Counter {
  windowStart: number;
  /** The shared count as the database last reported it (all instances). */
  shared: number;
  /** Hits counted here and not yet added to the database. */
  pending: number;
  lastSync: number;
  syncing: Promise<void> | null;
}

export interface Decision {
  allowed: boolean;
  retryAfterSeconds: number;
}

const SYNC_INTERVAL_MS = 250;
const MAX_KEYS = 50_000;

/**
 * Fixed-window counters whose state lives in the `rate_limits` table, so a limit holds across
 * several instances of the service. Each instance decides from the last shared count plus its
 * own unsynced hits and adds those to the database in the background at most every 250 ms per
 * key, so the hot path never waits for the limiter. Failures (`recordFailure`) sync at once.
 */
export class RateLimiter {
  private counters = new Map<string, Counter>();

  constructor(
    private db: Database,
    private clock: Clock,
  ) {}

  private counter(key: string, windowMs: number): Counter {
    const now = this.clock.now().getTime();
    const windowStart = now - (now % windowMs);
    let c = this.counters.get(key);
    if (!c || c.windowStart !== windowStart) {
      if (this.counters.size > MAX_KEYS) this.sweep(now);
      c = { windowStart, shared: 0, pending: 0, lastSync: 0, syncing: null };
      this.counters.set(key, c);
    }
    return c;
  }

  private sweep(now: number) {
    for (const [key, c] of this.counters) if (now - c.windowStart > 10 * 60_000 && !c.syncing) this.counters.delete(key);
  }

  private retryAfter(c: Counter, windowMs: number): number {
    return Math.max(1, Math.ceil((c.windowStart + windowMs - this.clock.now().getTime()) / 1000));
  }

  /** Counts one request against `limit` per window; `limit` 0 means unlimited. */
  hit(key: string, limit: number, windowMs: number): Decision {
    if (limit <= 0) return { allowed: true, retryAfterSeconds: 0 };
    const c = this.counter(key, windowMs);
    if (c.shared + c.pending >= limit) return { allowed: false, retryAfterSeconds: this.retryAfter(c, windowMs) };
    c.pending++;
    if (!c.syncing && this.clock.now().getTime() - c.lastSync >= SYNC_INTERVAL_MS) void this.sync(key, c);
    return { allowed: true, retryAfterSeconds: 0 };
  }

  /** Whether `key` has reached `limit` in the current window, without counting. */
  blocked(key: string, limit: number, windowMs: number): Decision {
    if (limit <= 0) return { allowed: true, retryAfterSeconds: 0 };
    const c = this.counter(key, windowMs);
    return c.shared + c.pending >= limit ? { allowed: false, retryAfterSeconds: this.retryAfter(c, windowMs) } : { allowed: true, retryAfterSeconds: 0 };
  }

  /** Counts a failure and waits for the shared count, so other instances see it at once. */
  async recordFailure(key: string, limit: number, windowMs: number): Promise<void> {
    if (limit <= 0) return;
    const c = this.counter(key, windowMs);
    c.pending++;
    await this.sync(key, c);
  }

  /** Adds pending hits to the shared row and reads the total back. Never throws. */
  sync(key: string, c: Counter): Promise<void> {
    if (c.syncing) return c.syncing.then(() => (c.pending > 0 ? this.sync(key, c) : undefined));
    const add = c.pending;
    c.pending = 0;
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
      .then(([row]) => {
        if (row) c.shared = row.count;
        else c.shared += add;
        if (Math.random() < 0.001) void this.db.delete(rateLimits).where(lt(rateLimits.windowStart, new Date(c.windowStart - 3600_000))).catch(() => {});
      })
      .catch(() => {
        // The limiter is not an authority: if the database is away, keep counting locally.
        c.shared += add;
      })
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

/** The address the limiter keys on: the socket address the server stamped, or the proxy's forwarded one. */
export function clientAddress(request: Request, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = request.headers.get("x-forwarded-for");
    if (forwarded) return forwarded.split(",")[0].trim();
  }
  return request.headers.get(CLIENT_ADDRESS_HEADER) ?? "unknown";
}

/** Set by server.ts from the socket; any value a client sends is overwritten. */
export const CLIENT_ADDRESS_HEADER = "x-latchkey-client-address";
