import { describe, expect, it } from "vitest";
import { generatedSection } from "../../tests/helpers/generated-doc";
import { limiterKey } from "../limits/rate-limit";
import { GUESSING_LIMITS, limitsTables, REQUEST_LIMITS } from "./limits";

const START = "<!-- declared-limits:start (rendered from lib/server/limits.ts; lib/server/limits.test.ts compares) -->";
const END = "<!-- declared-limits:end -->";

describe("the declared limits", () => {
  it("are the table docs/security.md shows (when this fails, paste the expected tables between the markers)", () => {
    expect(generatedSection("docs/security.md", START, END)).toBe(limitsTables());
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
