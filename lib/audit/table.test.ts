import { describe, expect, it } from "vitest";
import { generatedSection } from "../../tests/helpers/generated-doc";
import { renderAuditEventTable } from "./table";

const START = "<!-- audit-events:start (rendered from lib/audit/catalogue.ts by lib/audit/table.ts; lib/audit/table.test.ts compares) -->";
const END = "<!-- audit-events:end -->";

describe("the audit catalogue's table", () => {
  it("is the table docs/audit-events.md shows (when this fails, paste the expected table between the markers)", () => {
    expect(generatedSection("docs/audit-events.md", START, END)).toBe(renderAuditEventTable());
  });
});
