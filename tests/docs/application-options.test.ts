/**
 * Every protocol option a feature declares (lib/surfaces/application-options.ts) is documented where
 * an administrator looks for it: a row of docs/workspace-file.md's applications table, naming the
 * client types it applies to.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { APPLICATION_OPTIONS } from "../../lib/features/registry";

const doc = readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "workspace-file.md"), "utf8");
const typeWords: Record<string, string> = { PUBLIC: "PUBLIC", WEB_CONFIDENTIAL: "WEB_CONFIDENTIAL", M2M: "M2M" };

describe("docs/workspace-file.md", () => {
  it("has a row for every application option, with the client types it applies to", () => {
    expect(APPLICATION_OPTIONS.length).toBeGreaterThan(0);
    for (const option of APPLICATION_OPTIONS) {
      const row = doc.split("\n").find((line) => line.startsWith(`| \`${option.key}\` | boolean |`));
      expect(row, `no row for ${option.key}`).toBeDefined();
      for (const type of option.types) expect(row, `${option.key} should name ${type}`).toContain(typeWords[type]);
    }
  });
});
