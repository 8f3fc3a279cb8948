/**
 * docs/architecture.md "Adding a factor" lists the files outside a factor's folder that a factor
 * answered by a typed code touches. Each is checked here for every registered factor, so the list
 * is what the code asks for: a registration the page names and the code does not need (or the
 * reverse) fails.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FACTORS, TYPED_CODE_FACTORS, type FactorKind } from "../../lib/authn/factors/registry";
import { ISSUER_ROUTE_PATH } from "../../lib/http/security-headers";
import { CATALOGUES } from "../../lib/i18n/translate";
import { SIGN_IN_METHODS } from "../../lib/sign-in/outcomes";

const root = path.join(import.meta.dirname, "..", "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");
const doc = read("docs/architecture.md");
const section = doc.slice(doc.indexOf("## Adding a factor"), doc.indexOf("\n## ", doc.indexOf("## Adding a factor") + 1));
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
  "components/factors/<kind>.tsx": () => {
    for (const f of FACTORS) expect(existsSync(path.join(root, "components/factors", `${f.folder}.tsx`)), f.folder).toBe(true);
  },
  "components/factors/index.ts": () => {
    const source = read("components/factors/index.ts");
    for (const f of FACTORS) for (const e of f.evidence) expect(source, e.method).toMatch(new RegExp(`\\n\\s+${e.method satisfies FactorKind}: `));
  },
  "lib/i18n/messages/en.ts": () => {
    // The three catalogues hold the same keys (lib/i18n/translate.test.ts); a factor's parts use them.
    expect(Object.keys(CATALOGUES).sort()).toEqual(["de", "en", "fr"]);
    expect(touched).toContain("`de.ts`");
    expect(touched).toContain("`fr.ts`");
  },
  "lib/http/security-headers.ts": () => {
    for (const f of TYPED_CODE_FACTORS) expect(ISSUER_ROUTE_PATH.test(`/t/demo${f.answer.signInPath}`), f.answer.signInPath).toBe(true);
  },
  "docs/security.md": () => {
    const limits = read("docs/security.md");
    for (const f of FACTORS) expect(limits, f.folder).toContain(`\`lib/authn/factors/${f.folder}/\``);
  },
  "docs/configuration.md": () => {
    const configuration = read("docs/configuration.md");
    for (const label of SIGN_IN_METHODS) expect(configuration, label).toContain(`\`${label}\``);
  },
  "lib/authn/factors/registry.test.ts": () => {
    const source = read("lib/authn/factors/registry.test.ts");
    for (const f of FACTORS) expect(source, f.folder).toMatch(new RegExp(`["\\s]${f.folder}"?: `));
  },
  "tests/integration/route-bindings.test.ts": () => {
    const source = read("tests/integration/route-bindings.test.ts");
    for (const f of TYPED_CODE_FACTORS) {
      expect(source, f.folder).toContain(`"${f.folder}"`);
      expect(source, f.answer.portalPath).toContain(`"${f.answer.portalPath}"`);
    }
  },
  "tests/helpers/factor-combinations.ts": () => {
    const source = read("tests/helpers/factor-combinations.ts");
    for (const f of FACTORS) if (f.held) for (const e of f.evidence) expect(source, e.method).toMatch(new RegExp(`\\b${e.method}\\b`));
  },
};

/** Files the list names as readers or checkers of a registration, not as files a factor changes. */
const CHECKERS = ["lib/authn/evidence.ts", "tests/dispatch/security-headers.test.ts", "lib/server/limits.test.ts", "tests/docs/domain-metrics.test.ts"];

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
});
