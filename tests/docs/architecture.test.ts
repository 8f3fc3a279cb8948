/**
 * docs/architecture.md describes the layers the code has: its table of folders says what
 * `.dependency-cruiser.cjs` enforces (LAYERS), LAYERS allows exactly the folder-to-folder arrows
 * some import uses (none spare), and its picture is the one scripts/architecture.mjs draws from
 * those imports. `node scripts/architecture.mjs --write` brings the three back in line.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { cruise, differences, loadConfig, picture, pictureInPage, readLayers, reduce, usedArrows } from "../../scripts/architecture.mjs";

const { layers, kernel } = readLayers(loadConfig());
const folders = [...layers.keys()];
const page = readFileSync(new URL("../../docs/architecture.md", import.meta.url), "utf8");
const FIX = "(node scripts/architecture.mjs --write)";

function documented(folder: string): string[] {
  const row = page.split("\n").find((line) => line.startsWith(`| \`${folder}\` |`));
  if (!row) throw new Error(`docs/architecture.md has no row for ${folder}`);
  const cell = row.split(" | ").at(-1)!.replace(/ \|$/, "");
  const named = [...cell.matchAll(/`(lib\/[a-z./-]+)`/g)].map((m) => m[1]);
  if (!cell.startsWith("everything above")) return named.sort();
  const above = folders.slice(0, folders.indexOf(folder));
  return above.filter((f) => !named.includes(f)).sort();
}

describe("docs/architecture.md's table of folders", () => {
  it.each(folders)("says what %s may import, as LAYERS does", (folder) => {
    expect(documented(folder)).toEqual([...layers.get(folder)!].sort());
  });

  it("has one row for each folder of LAYERS, and no other", () => {
    const rows = page
      .split("\n")
      .filter((line) => line.startsWith("| `lib/"))
      .map((line) => line.split("`")[1]);
    expect(rows.sort()).toEqual([...folders].sort());
  });

  it("reads LAYERS back without the kernel", () => {
    expect(kernel).toContain("db");
    expect(kernel).toContain("lib/i18n");
    expect(folders).toContain("lib/service.ts");
  });
});

describe("the layers the imports have", () => {
  let used: Map<string, Map<string, string>>;
  let unlisted: string[];
  beforeAll(() => {
    // One cruise for the file (a few seconds): dependency-cruiser resolves every import as `npm run lint` does.
    ({ used, unlisted } = usedArrows(cruise(), { layers, kernel }));
  }, 120_000);

  it("puts every lib/ file in a folder of LAYERS", () => {
    expect(unlisted).toEqual([]);
  });

  it("allows no arrow that no import uses, and lists the folders bottom to top", () => {
    const { unused, missing, upward } = differences(layers, used);
    expect(unused.map(({ from, to }) => `${from} → ${to}`), `allowed, no import uses it ${FIX}`).toEqual([]);
    expect(missing.map(({ from, to, witness }) => `${from} → ${to} (${witness})`), "imported, not allowed (npm run lint)").toEqual([]);
    expect(upward.map(({ from, to }) => `${from} → ${to}`), "points up the order of LAYERS").toEqual([]);
  });

  it("draws docs/architecture.md's picture from them", () => {
    expect(pictureInPage(page), `docs/architecture.md's picture ${FIX}`).toBe(picture(layers, used));
  });
});

describe("the picture's arrows", () => {
  it("leave out an arrow a chain of others implies, and keep every other", () => {
    const graph = new Map([
      ["a", ["b", "c", "d"]],
      ["b", ["c"]],
      ["c", []],
      ["d", []],
    ]);
    expect(reduce(graph)).toEqual(
      new Map([
        ["a", ["b", "d"]],
        ["b", ["c"]],
        ["c", []],
        ["d", []],
      ]),
    );
  });
});
