/**
 * docs/architecture.md "Adding a grant type" lists the files outside a grant's own file that a grant
 * type touches. Each is checked here for every registered grant, and the list is what the checks
 * cover: a file the page names and nothing checks (or the reverse) fails.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { pageSection } from "../helpers/generated-doc";
import { describe, expect, it } from "vitest";
import { GRANTS } from "../../lib/oauth/grants";
import type { GrantHandler } from "../../lib/oauth/grants/types";

const root = path.join(import.meta.dirname, "..", "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");
const section = pageSection("docs/architecture.md", "## Adding a grant type");
const touched = section.slice(section.indexOf("touches exactly these files"));
const grantsDir = path.join(root, "lib", "oauth", "grants");
const isHandler = (value: unknown): value is GrantHandler =>
  typeof value === "object" && value !== null && typeof (value as GrantHandler).grantType === "string" && typeof (value as GrantHandler).handle === "function";

const FILES: Record<string, () => Promise<void> | void> = {
  "lib/oauth/grants/index.ts": async () => {
    // Every handler a file of the folder exports is the registry's entry for its grant type.
    const files = readdirSync(grantsDir)
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && f !== "index.ts" && f !== "types.ts")
      .map((f) => path.join(grantsDir, f));
    // A feature folder's grant (`lib/oauth/<feature>/grant.ts`), imported by the registry from there.
    for (const [, feature] of read("lib/oauth/grants/index.ts").matchAll(/from "\.\.\/([\w-]+)\/grant"/g)) files.push(path.join(root, "lib", "oauth", feature, "grant.ts"));
    const found: GrantHandler[] = [];
    for (const file of files) {
      const exported = (await import(file)) as Record<string, unknown>;
      const handlers = Object.values(exported).filter(isHandler);
      expect(handlers.length, `${file} exports a grant handler`).toBeGreaterThan(0);
      found.push(...handlers);
    }
    for (const handler of found) expect(GRANTS.get(handler.grantType), handler.grantType).toBe(handler);
    expect(found.map((h) => h.grantType).sort()).toEqual([...GRANTS.keys()].sort());
    // Discovery lists the registry, not a list of its own.
    expect(read("lib/oauth/discovery.ts")).toContain("grant_types_supported: [...GRANTS.keys()]");
  },
  "tests/fuzz/cases.ts": () => {
    const cases = read("tests/fuzz/cases.ts");
    for (const grant of GRANTS.keys()) expect(cases, grant).toContain(`["grant_type", "${grant}"]`);
  },
  "tests/integration/": () => {
    const dir = path.join(root, "tests", "integration");
    const sources = readdirSync(dir, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".test.ts"))
      .map((f) => readFileSync(path.join(dir, f), "utf8"));
    for (const grant of GRANTS.keys()) {
      const posted = new RegExp(`grant_type(?:: |", |=)"?${grant}\\b`);
      expect(sources.some((s) => posted.test(s)), `a test in tests/integration/ posts grant_type=${grant}`).toBe(true);
    }
  },
};

describe("docs/architecture.md, Adding a grant type", () => {
  it("lists exactly the places outside a grant's file that the checks here cover", () => {
    const named = new Set([...touched.matchAll(/`((?:lib|tests)\/[\w./<>-]+\/(?:[\w.<>-]+\.ts)?)`/g)].map((m) => m[1]));
    // The list also names the model test and the files the registry is read by.
    for (const reader of ["tests/docs/adding-a-grant.test.ts", "lib/oauth/token.ts", "lib/oauth/discovery.ts", "tests/integration/refresh-rotation.test.ts"]) named.delete(reader);
    expect([...named].sort()).toEqual(Object.keys(FILES).sort());
  });

  for (const [file, check] of Object.entries(FILES)) it(`${file}: holds every registered grant type`, check);
});
