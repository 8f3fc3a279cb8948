import { readFileSync } from "node:fs";
import path from "node:path";
import { getTableName, is, Table } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import * as schema from "../../db/schema";

const doc = readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "operations.md"), "utf8");
const retention = doc.slice(doc.indexOf("## What the database keeps"), doc.indexOf("\n## ", doc.indexOf("## What the database keeps") + 1));

describe("docs/operations.md", () => {
  it("states how long every table of the schema is kept", () => {
    const tables = Object.values(schema)
      .filter((value) => is(value, Table))
      .map((table) => getTableName(table as Table));
    expect(tables.length).toBeGreaterThan(30);
    const unstated = tables.filter((name) => !retention.includes(`\`${name}\``));
    expect(unstated, "tables missing from 'What the database keeps, and for how long'").toEqual([]);
  });
});
