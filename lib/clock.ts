import { readFileSync } from "node:fs";

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * For end-to-end tests only: the system clock shifted by the number of milliseconds written in
 * `file` (re-read at most every 100 ms; a missing or unreadable file counts as 0). The e2e suite
 * moves the production server's time with it (LATCHKEY_TEST_CLOCK_FILE, which lib/service.ts
 * refuses with an https PUBLIC_URL), the way integration tests inject their clock.
 */
export function fileOffsetClock(file: string): Clock {
  let offset = 0;
  let readAt = 0;
  return {
    now() {
      const real = Date.now();
      if (real - readAt >= 100) {
        readAt = real;
        try {
          const value = Number(readFileSync(file, "utf8").trim());
          offset = Number.isFinite(value) ? value : 0;
        } catch {
          offset = 0;
        }
      }
      return new Date(real + offset);
    },
  };
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export function addMs(date: Date, ms: number): Date {
  return new Date(date.getTime() + ms);
}

export function epochSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

/** A time as messages write it: `2026-11-30 04:20 UTC` (to the minute). */
export const utcMinute = (at: Date): string => `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`;
