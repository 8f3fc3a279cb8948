import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import type { Database } from "../../db/client";
import { limiterKey, MAX_ENTRIES, MAX_KEY_LENGTH, MAX_WINDOW_MS, RateLimiter } from "./rate-limit";

class Clock {
  current = Date.UTC(2026, 10, 21, 12);
  now() {
    return new Date(this.current);
  }
}

/**
 * A stand-in for the `rate_limits` upsert: counts per key in a map (or, with `keep` false, as if
 * every row were new, so the test measures the limiter's memory only), and records the longest
 * key stored.
 */
function fakeDatabase({ keep = true } = {}) {
  const rows = new Map<string, { windowStart: number; count: number }>();
  const stats = { longestKey: 0, inserts: 0 };
  const db = {
    insert: () => ({
      values: (v: { key: string; windowStart: Date; count: number }) => ({
        onConflictDoUpdate: () => ({
          returning: async () => {
            stats.inserts++;
            stats.longestKey = Math.max(stats.longestKey, v.key.length);
            const row = rows.get(v.key);
            const next = row && row.windowStart === v.windowStart.getTime() ? { windowStart: row.windowStart, count: row.count + v.count } : { windowStart: v.windowStart.getTime(), count: v.count };
            if (keep) rows.set(v.key, next);
            return [{ count: next.count }];
          },
        }),
      }),
    }),
  };
  return { db: db as unknown as Database, rows, stats };
}

/** A fresh, flat 10 KB string per call (not a rope over a shared one), as a client would send. */
function keyFactory(bytes = 10 * 1024) {
  const buffer = Buffer.alloc(bytes, "k");
  return (i: number) => {
    buffer.write(i.toString(36).padStart(8, "0"), 0, "latin1");
    return `authfail:ws:${buffer.toString("latin1")}:10.0.0.1`;
  };
}

function collectGarbage(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

const WINDOW = 5 * 60_000;

describe("the limiter's memory", () => {
  it("stays bounded through 100,000 distinct 10 KB keys: at most MAX_ENTRIES counters and under 16 MiB of heap growth", async () => {
    const gc = collectGarbage();
    const { db, stats } = fakeDatabase({ keep: false });
    const limiter = new RateLimiter(db, new Clock());
    const key = keyFactory();
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 100_000; i++) {
      const k = key(i);
      // As client authentication does: ask, then count the failure.
      expect(limiter.blocked(k, 10, WINDOW).allowed).toBe(true);
      await limiter.recordFailure(k, 10, WINDOW);
      limiter.hit(`ip:ws:${k}`, 1200, 60_000);
      if (i % 10_000 === 9_999) {
        gc();
        // Checked as it goes, so a leak fails here instead of exhausting the test worker.
        expect(limiter.size).toBeLessThanOrEqual(MAX_ENTRIES);
        expect(process.memoryUsage().heapUsed - before).toBeLessThan(16 * 1024 * 1024);
      }
    }
    await limiter.flush();
    gc();
    expect(limiter.size).toBeLessThanOrEqual(MAX_ENTRIES);
    const growth = process.memoryUsage().heapUsed - before;
    console.log(`heap growth after 100,000 keys: ${(growth / 1024 / 1024).toFixed(1)} MiB, ${limiter.size} counters`);
    expect(growth).toBeLessThan(16 * 1024 * 1024);
    // Nor do the rows grow with the key.
    expect(stats.longestKey).toBeLessThanOrEqual(MAX_KEY_LENGTH);
  }, 120_000);

  it("counts the hits of a sync still waiting for the database: a slow answer lets no request past the limit", async () => {
    const { db } = fakeDatabase();
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    // Every upsert answers only once the gate opens, as a busy database would.
    const slow = {
      ...(db as unknown as Record<string, unknown>),
      insert: () => {
        const inner = (db as unknown as { insert: () => { values: (v: unknown) => { onConflictDoUpdate: () => { returning: () => Promise<unknown> } } } }).insert();
        return { values: (v: unknown) => ({ onConflictDoUpdate: () => ({ returning: async () => (await gate, inner.values(v).onConflictDoUpdate().returning()) }) }) };
      },
    } as unknown as Database;
    const limiter = new RateLimiter(slow, new Clock());
    // The first hit starts a sync that has not answered when the next ones arrive.
    const decisions = Array.from({ length: 5 }, () => limiter.hit("client:ws:slow", 3, 60_000).allowed);
    expect(decisions).toEqual([true, true, true, false, false]);
    release();
    await limiter.flush();
    expect(limiter.hit("client:ws:slow", 3, 60_000).allowed).toBe(false);
  });

  it("asking whether a key is blocked holds nothing", () => {
    const limiter = new RateLimiter(fakeDatabase().db, new Clock());
    for (let i = 0; i < 1000; i++) expect(limiter.blocked(`authfail:ws:client-${i}:10.0.0.1`, 10, WINDOW).allowed).toBe(true);
    expect(limiter.size).toBe(0);
  });

  it("keeps throttling a key at its limit while a stream of new keys passes through", async () => {
    const { db } = fakeDatabase();
    const limiter = new RateLimiter(db, new Clock());
    const target = "authfail:ws:web:10.9.9.9";
    for (let i = 0; i < 10; i++) await limiter.recordFailure(target, 10, WINDOW);
    expect(limiter.blocked(target, 10, WINDOW).allowed).toBe(false);
    for (let i = 0; i < 3 * MAX_ENTRIES; i++) await limiter.recordFailure(`authfail:ws:bogus-${i}:10.0.0.1`, 10, WINDOW);
    expect(limiter.size).toBeLessThanOrEqual(MAX_ENTRIES);
    expect(limiter.blocked(target, 10, WINDOW).allowed).toBe(false);
  });

  it("a dropped counter comes back with the shared count at its next use", async () => {
    const { db } = fakeDatabase();
    const clock = new Clock();
    const limiter = new RateLimiter(db, clock);
    const target = "authfail:ws:web:10.9.9.9";
    for (let i = 0; i < 5; i++) await limiter.recordFailure(target, 10, WINDOW);
    // Fill memory with keys at their limit too, so the target (the oldest) is dropped.
    for (let i = 0; i < MAX_ENTRIES; i++) await limiter.recordFailure(`authfail:ws:other-${i}:10.0.0.1`, 1, WINDOW);
    expect(limiter.blocked(target, 10, WINDOW).allowed).toBe(true);
    for (let i = 0; i < 5; i++) await limiter.recordFailure(target, 10, WINDOW);
    expect(limiter.blocked(target, 10, WINDOW).allowed).toBe(false);
  });
});

describe("limiterKey", () => {
  it("keeps short keys and digests long or unstorable ones, keeping the readable prefix", () => {
    expect(limiterKey("ip:ws:10.0.0.1")).toBe("ip:ws:10.0.0.1");
    const long = limiterKey(`authfail:ws:${"x".repeat(10_000)}:10.0.0.1`);
    expect(long).toMatch(/^authfail:sha256:[A-Za-z0-9_-]{43}$/);
    expect(long.length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
    expect(limiterKey(`authfail:ws:${"x".repeat(10_000)}:10.0.0.2`)).not.toBe(long);
    expect(limiterKey("authfail:ws:a\u0000b:10.0.0.1")).toMatch(/^authfail:sha256:/);
  });
});

describe("windows", () => {
  it("are at most MAX_WINDOW_MS, the age past which the purge deletes a row: a longer one is refused before anything is counted", async () => {
    const { db, rows } = fakeDatabase();
    const limiter = new RateLimiter(db, new Clock());
    expect(() => limiter.hit("day:ws:a", 5, MAX_WINDOW_MS + 1)).toThrow(/at most 1 hour/);
    await expect(limiter.recordFailure("day:ws:a", 5, 2 * MAX_WINDOW_MS)).rejects.toThrow(/at most 1 hour/);
    expect(rows.size).toBe(0);
    expect(limiter.hit("hour:ws:a", 5, MAX_WINDOW_MS).allowed).toBe(true);
  });
});
