/**
 * docs/architecture.md "Adding a factor" lists the files outside a factor's folder that a factor
 * answered by a typed code touches. Each is checked here for every registered factor, so the list
 * is what the code asks for: a registration the page names and the code does not need (or the
 * reverse) fails.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { pageSection } from "../helpers/generated-doc";
import { describe, expect, it } from "vitest";
import { FACTORS, TYPED_CODE_FACTORS, type FactorKind } from "../../lib/authn/factors/registry";
import { ISSUER_ROUTE_PATH } from "../../lib/http/security-headers";
import { LOCALES } from "../../lib/i18n/locales";

const root = path.join(import.meta.dirname, "..", "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");
const section = pageSection("docs/architecture.md", "## Adding a factor");
/** The numbered list of files a typed-code factor touches outside its folder. */
const touched = section.slice(section.indexOf("touches exactly these files"), section.indexOf("A factor that stores"));

/** Each file the page lists, and what it must hold for every registered factor. */
const FILES: Record<string, () => void> = {
  "lib/authn/factors/registry.ts": () => {
    const source = read("lib/authn/factors/registry.ts");
    for (const f of FACTORS) expect(source, f.folder).toContain(`from "./${f.folder}"`);
  },
  "lib/authn/factors/evidence-rules.ts": () => {
    const source = read("lib/authn/factors/evidence-rules.ts");
    for (const f of FACTORS) expect(source, f.folder).toContain(`from "./${f.folder}/evidence"`);
  },
  "docs/security.md": () => {
    // One docs file: its row in the table of declared limits and its methods' rows in the table of evidence methods.
    const security = read("docs/security.md");
    for (const f of FACTORS) expect(security, f.folder).toContain(`\`lib/authn/factors/${f.folder}/\``);
    const methods = security.slice(security.indexOf("### Evidence methods"));
    for (const f of FACTORS) for (const e of f.evidence) expect(methods, e.method).toContain(`\n| \`${e.method satisfies FactorKind}\``);
  },
  "lib/authn/factors/registry.test.ts": () => {
    const source = read("lib/authn/factors/registry.test.ts");
    for (const f of FACTORS) expect(source, f.folder).toMatch(new RegExp(`["\\s]${f.folder}"?: `));
  },
};

/** Files the list names as readers or checkers of a registration, not as files a factor changes. */
const CHECKERS = [
  "tests/docs/adding-a-factor.test.ts",
  "lib/authn/evidence.ts",
  "lib/server/limits.test.ts",
  "tests/docs/domain-metrics.test.ts",
  "lib/authn/evidence.test.ts",
];

describe("docs/architecture.md, Adding a factor", () => {
  it("lists exactly the files outside a typed-code factor's folder that the registration checks here", () => {
    const named = new Set([...touched.matchAll(/`([\w./<>[\]-]+\/[\w.<>-]+\.(?:ts|tsx|md))`/g)].map((m) => m[1]));
    // The page also names the files that read the list and the tests that fail until a file is done.
    for (const file of CHECKERS) {
      expect(named.has(file), file).toBe(true);
      expect(existsSync(path.join(root, file)), file).toBe(true);
      named.delete(file);
    }
    expect([...named]).toEqual(Object.keys(FILES));
  });

  for (const [file, check] of Object.entries(FILES)) it(`${file}: holds every registered factor`, check);

  it("needs no message in the shared catalogue: a typed-code factor's field label is in its folder, in every language", () => {
    expect(touched).not.toMatch(/lib\/i18n\/messages/);
    for (const f of TYPED_CODE_FACTORS) {
      expect(Object.keys(f.answer.label).sort(), f.folder).toEqual([...LOCALES].sort());
      for (const locale of LOCALES) expect(f.answer.label[locale], `${f.folder} (${locale})`).toMatch(/\S/);
    }
  });

  it("needs no line elsewhere for a typed-code factor: its form posts are route paths by their folder", () => {
    for (const f of TYPED_CODE_FACTORS) {
      for (const p of [f.answer.signInPath, f.answer.portalPath]) expect(ISSUER_ROUTE_PATH.test(`/t/demo${p}`), p).toBe(true);
    }
  });
});
