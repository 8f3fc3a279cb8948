import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FACTORS } from "../../lib/authn/factors/registry";
import { SIGN_IN_OUTCOMES } from "../../lib/metrics";
import { SIGN_IN_METHODS } from "../../lib/sign-in/outcomes";

const doc = readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "configuration.md"), "utf8");
/** The row's column of labels. */
const labels = (doc.split("\n").find((line) => line.startsWith("| `latchkey_sign_ins_total` |")) ?? "").split(" | ")[1] ?? "";
/** The values the row lists for `label`: the backquoted words after "`label`:" up to the next ";". */
const listed = (label: string) => [...(labels.split(`\`${label}\`: `)[1]?.split(";")[0] ?? "").matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);

describe("docs/configuration.md, Domain metrics", () => {
  it("lists exactly the sign-in methods the factors' descriptors and the federated sources label, in their order", () => {
    expect(listed("method")).toEqual([...SIGN_IN_METHODS]);
    expect(listed("outcome")).toEqual([...SIGN_IN_OUTCOMES]);
  });

  it("takes each factor's labels from its descriptor: what it verified, and its failed sign-ins under `failedSignIn`", () => {
    const fromFactors = FACTORS.flatMap((f) => [...Object.values<string>(f.metricLabels), ...(f.failedSignIn ? [f.failedSignIn] : [])]);
    expect(new Set(SIGN_IN_METHODS)).toEqual(new Set([...fromFactors, "enterprise", "social"]));
  });
});
