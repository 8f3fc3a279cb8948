import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { limiterKey } from "../limits/rate-limit";
import { GUESSING_LIMITS, limitsTables, REQUEST_LIMITS } from "./limits";

const START = "<!-- declared-limits:start (rendered from lib/server/limits.ts; lib/server/limits.test.ts compares) -->";
const END = "<!-- declared-limits:end -->";

describe("the declared limits", () => {
  it("are the table docs/security.md shows (when this fails, paste the expected tables between the markers)", () => {
    const page = readFileSync(new URL("../../docs/security.md", import.meta.url), "utf8");
    const start = page.indexOf(START);
    const end = page.indexOf(END);
    expect(start).toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(start);
    expect(page.slice(start + START.length, end).trim()).toBe(limitsTables());
  });

  it("name one set of counters each, kept readable by the limiter", () => {
    const names = [...GUESSING_LIMITS, ...REQUEST_LIMITS].map((d) => d.limits.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z-]{1,16}$/);
    // The limiter keeps the readable prefix of a long key (an email or client_id of any length).
    const prefixes = GUESSING_LIMITS.flatMap(({ limits: l }) => [
      l.perAddress && `${l.name}-source:`,
      l.unidentified && `${l.name}-unidentified:`,
      l.perAccountAndAddress && `${l.name}:`,
      l.perAccount && `${l.name}-account:`,
      l.knownDevice && `${l.name}-device:`,
    ]).filter((p): p is string => typeof p === "string");
    for (const prefix of prefixes) expect(limiterKey(`${prefix}${"x".repeat(200)}`).startsWith(`${prefix}sha256:`)).toBe(true);
  });
});
