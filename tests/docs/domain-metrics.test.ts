import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FACTORS } from "../../lib/authn/factors/registry";
import { SIGN_IN_OUTCOMES } from "../../lib/metrics";
import { SIGN_IN_METHODS } from "../../lib/sign-in/outcomes";

const read = (page: string) => readFileSync(path.join(import.meta.dirname, "..", "..", "docs", page), "utf8");
const doc = read("configuration.md");
/** The row's column of labels. */
const labels = (doc.split("\n").find((line) => line.startsWith("| `latchkey_sign_ins_total` |")) ?? "").split(" | ")[1] ?? "";
/** The text the row gives `label`: after "`label`: " up to the next ";". */
const given = (label: string) => labels.split(`\`${label}\`: `)[1]?.split(";")[0] ?? "";
/** The backquoted values of that text. */
const listed = (label: string) => [...given(label).matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);

/**
 * The factors' labels as docs/security.md's table of declared limits lists them (its last column,
 * rendered from each factor's descriptor: lib/server/limits.test.ts compares it), row by row, each once.
 */
function factorLabelsInSecurityTable(): string[] {
  const security = read("security.md");
  const table = security.slice(security.indexOf("| Failures of |"), security.indexOf("<!-- declared-limits:end -->")).split("\n\n")[0].split("\n");
  expect(table[0]).toMatch(/\| Its sign-ins, as `latchkey_sign_ins_total\{method\}` counts them \|$/);
  const cells = table.slice(2).map((row) => row.split(" | ").at(-1)?.replace(/ \|$/, "") ?? "");
  return [...new Set(cells.flatMap((cell) => [...cell.matchAll(/`([a-z_]+)`/g)].map((m) => m[1])))];
}

describe("docs/configuration.md, Domain metrics", () => {
  it("lists exactly the sign-in methods the factors' descriptors and the federated sources label, in their order: the factors' in docs/security.md's table, which it points to", () => {
    expect(given("method")).toContain("[table of declared limits](security.md#declared-limits)");
    const federated = listed("method").slice(listed("method").indexOf("enterprise"));
    expect(federated).toEqual(["enterprise", "social"]);
    expect([...factorLabelsInSecurityTable(), ...federated]).toEqual([...SIGN_IN_METHODS]);
    expect(listed("outcome")).toEqual([...SIGN_IN_OUTCOMES]);
  });

  it("takes each factor's labels from its descriptor: what it verified, and its failed sign-ins under `failedSignIn`", () => {
    const fromFactors = FACTORS.flatMap((f) => [...Object.values<string>(f.metricLabels), ...(f.failedSignIn ? [f.failedSignIn] : [])]);
    expect(new Set(SIGN_IN_METHODS)).toEqual(new Set([...fromFactors, "enterprise", "social"]));
  });
});
