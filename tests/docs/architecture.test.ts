/**
 * docs/architecture.md's table of folders says what `.dependency-cruiser.cjs` enforces (LAYERS):
 * a row per folder, each with exactly the folders it may import.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const { forbidden } = require("../../.dependency-cruiser.cjs") as { forbidden: { name: string; to: { pathNot?: string[] } }[] };
const page = readFileSync(new URL("../../docs/architecture.md", import.meta.url), "utf8");

/** LAYERS, read back from the layer rules: each folder and what it may import besides itself and the kernel. */
const layers = new Map(
  forbidden
    .filter((rule) => rule.name.startsWith("layer:") && rule.name !== "layer:unlisted")
    .map((rule) => {
      const folder = rule.name.slice("layer:".length);
      const allowed = (rule.to.pathNot ?? [])
        .map((p) => p.replace(/^\^/, "").replace(/\\\./g, ".").replace(/\/$|\$$/g, ""))
        .filter((p) => p.startsWith("lib/") && p !== folder && !["lib/clock.ts", "lib/crypto.ts", "lib/config.ts", "lib/coded-error.ts", "lib/text.ts", "lib/user-agent.ts", "lib/uris.ts", "lib/i18n"].includes(p));
      return [folder, allowed.sort()] as const;
    }),
);

function documented(folder: string): string[] {
  const row = page.split("\n").find((line) => line.startsWith(`| \`${folder}\` |`));
  if (!row) throw new Error(`docs/architecture.md has no row for ${folder}`);
  const cell = row.split(" | ").at(-1)!.replace(/ \|$/, "");
  const named = [...cell.matchAll(/`(lib\/[a-z.-]+)`/g)].map((m) => m[1]);
  if (!cell.startsWith("everything above except")) return named.sort();
  const above = [...layers.keys()].slice(0, [...layers.keys()].indexOf(folder));
  return above.filter((f) => !named.includes(f)).sort();
}

describe("docs/architecture.md's table of folders", () => {
  it.each([...layers.keys()])("says what %s may import, as LAYERS does", (folder) => {
    expect(documented(folder)).toEqual(layers.get(folder));
  });
});
