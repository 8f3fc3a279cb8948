import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderAuditEventTable } from "./table";

const START = "<!-- audit-events:start (rendered from lib/audit/catalogue.ts by lib/audit/table.ts; lib/audit/table.test.ts compares) -->";
const END = "<!-- audit-events:end -->";

describe("the audit catalogue's table", () => {
  it("is the table docs/audit-events.md shows (when this fails, paste the expected table between the markers)", () => {
    const page = readFileSync(new URL("../../docs/audit-events.md", import.meta.url), "utf8");
    const start = page.indexOf(START);
    const end = page.indexOf(END);
    expect(start).toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(start);
    expect(page.slice(start + START.length, end).trim()).toBe(renderAuditEventTable());
  });
});
