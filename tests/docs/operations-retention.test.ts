import { getTableName, is, Table } from "drizzle-orm";
import { pageSection } from "../helpers/generated-doc";
import { describe, expect, it } from "vitest";
import * as schema from "../../db/schema";
import { DAY, HOUR, MINUTE } from "../../lib/clock";
import { RETENTION } from "../../lib/features/purge";

const retention = pageSection("docs/operations.md", "## What the database keeps");

/** The rows of the tables under the heading `title` (first cell, what it holds, how long it is kept). */
function rowsUnder(title: string): { tables: string[]; line: string; kept: string }[] {
  const start = retention.indexOf(`### ${title}`);
  expect(start, title).toBeGreaterThan(0);
  const end = retention.indexOf("\n### ", start + 1);
  const section = retention.slice(start, end === -1 ? undefined : end);
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => {
      const cells = line.split("|").map((c) => c.trim());
      return { tables: [...cells[1]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!), line, kept: cells[3]! };
    });
}

/** A duration as the page writes it: "1 hour", "10 minutes", "30 days", "1 week". */
function inWords(ms: number): string {
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  if (ms % (7 * DAY) === 0) return unit(ms / (7 * DAY), "week");
  if (ms % DAY === 0) return unit(ms / DAY, "day");
  if (ms % HOUR === 0) return unit(ms / HOUR, "hour");
  return unit(ms / MINUTE, "minute");
}

describe("docs/operations.md", () => {
  it("states how long every table of the schema is kept", () => {
    const tables = Object.values(schema)
      .filter((value) => is(value, Table))
      .map((table) => getTableName(table as Table));
    expect(tables.length).toBeGreaterThan(30);
    const unstated = tables.filter((name) => !retention.includes(`\`${name}\``));
    expect(unstated, "tables missing from 'What the database keeps, and for how long'").toEqual([]);
  });

  const purged = [...rowsUnder("Short-lived rows"), ...rowsUnder("Rows that outlive a sign-in")];

  it("has a row for every declared retention (lib/features/purge.ts), stating its lifetime and how long it is kept", () => {
    expect(RETENTION.length).toBeGreaterThanOrEqual(15);
    expect(new Set(RETENTION.map((r) => r.name)).size, "retention names are unique").toBe(RETENTION.length);
    for (const r of RETENTION) {
      const table = getTableName(r.table as Table);
      const row = purged.find((p) => p.tables.includes(table));
      expect(row, `${r.name}: no row for \`${table}\` under "Short-lived rows" or "Rows that outlive a sign-in"`).toBeDefined();
      if (r.lifetime) expect(row!.line, `${r.name}: its lifetime`).toContain(inWords(r.lifetime));
      if (typeof r.grace === "function") expect(row!.kept, `${r.name}: the setting its retention comes from`).toMatch(/`[A-Z][A-Z_]+`/);
      else if (r.grace > 0) expect(row!.kept, `${r.name}: how long it is kept`).toContain(inWords(r.grace));
    }
  });

  it("lists among the purged rows only declared ones, or rows deleted with others", () => {
    const declared = new Set(RETENTION.map((r) => getTableName(r.table as Table)));
    const undeclared = purged.filter((p) => !p.tables.some((t) => declared.has(t)) && !/deleted (with|as)/.test(p.kept));
    expect(undeclared.map((p) => p.tables.join(", "))).toEqual([]);
  });
});
