/**
 * docs/recipes/: each page's program is the example of examples/ file for file, byte for byte (a
 * Next.js example adds only its package.json, which pins the next-auth version its page names), and
 * the examples' workspace file registers each example's addresses as examples/README.md starts it
 * (e2e/recipes.spec.ts runs the programs against the hosted pages).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { programFiles } from "../../e2e/recipe-program";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

interface RecipeExample {
  page: string;
  language: string;
  example: string;
  clientId: string;
  origin: string;
  /** Where the library receives the sign-in's redirect, under the origin. */
  callback: string;
  /** The variable that names the application's origin. */
  originVariable: string;
  /** The package the page pins (its example's package.json names it, and nothing else). */
  pinned?: string;
}

const ANY = { callback: "/callback", originVariable: "APP_ORIGIN" };
const NEXT_AUTH = { language: "js", callback: "/api/auth/callback/latchkey", pinned: "next-auth" };

const RECIPE_EXAMPLES: RecipeExample[] = [
  { ...ANY, page: "docs/recipes/authlib.md", language: "python", example: "examples/python-authlib", clientId: "recipe-python", origin: "http://localhost:4100" },
  { ...ANY, page: "docs/recipes/oauth4webapi.md", language: "js", example: "examples/oauth4webapi", clientId: "recipe-oauth4webapi", origin: "http://localhost:4300" },
  { ...ANY, page: "docs/recipes/passport.md", language: "js", example: "examples/passport", clientId: "recipe-passport", origin: "http://localhost:4400" },
  { ...ANY, page: "docs/recipes/go.md", language: "go", example: "examples/go", clientId: "recipe-go", origin: "http://localhost:4200" },
  { ...NEXT_AUTH, page: "docs/recipes/authjs.md", example: "examples/authjs", clientId: "recipe-authjs", origin: "http://localhost:4500", originVariable: "AUTH_URL" },
  { ...NEXT_AUTH, page: "docs/recipes/nextauth-v4.md", example: "examples/nextauth-v4", clientId: "recipe-nextauth", origin: "http://localhost:4600", originVariable: "NEXTAUTH_URL" },
];

/** The example folder's files, relative to it (what npm and Next.js write there when it runs left out). */
function exampleFiles(folder: string): string[] {
  const root = fileURLToPath(new URL(`../../${folder}/`, import.meta.url));
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"))
    .filter((file) => !/^(node_modules|\.next)\//.test(file))
    .sort();
}

describe("the recipes", () => {
  it.each(RECIPE_EXAMPLES)("$page shows $example verbatim, file for file", ({ page, language, example, pinned }) => {
    const files = programFiles(read(page), language);
    for (const file of files) expect(file.text, `${example}/${file.path}`).toBe(read(`${example}/${file.path}`));
    const extra = pinned ? ["package.json"] : [];
    expect(exampleFiles(example)).toEqual([...files.map((file) => file.path), ...extra].sort());
  });

  it.each(RECIPE_EXAMPLES.filter((recipe) => !recipe.pinned))("$page says which port its program listens on (PORT), which APP_ORIGIN alone does not set", ({ page, language }) => {
    const text = read(page);
    expect(programFiles(text, language).map((file) => file.text).join("\n")).toMatch(/\bPORT\b/);
    const prose = text.replace(/```[\s\S]*?```/g, "");
    expect(prose).toMatch(/It listens on `PORT` \(4000 when unset\): set\s+`PORT` to the port `APP_ORIGIN` names\./);
    // Debian's packages are seen by the system Python only, not by one earlier on PATH.
    if (language === "python") expect(prose).toContain("`/usr/bin/python3 app.py`");
  });

  it.each(RECIPE_EXAMPLES.filter((recipe) => recipe.pinned))("$example/package.json pins the $pinned its page was tested with", ({ page, example, pinned }) => {
    const manifest = JSON.parse(read(`${example}/package.json`)) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies)).toEqual([pinned]);
    const version = manifest.dependencies[pinned!]!;
    expect(version).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
    expect(read(page)).toContain(`${pinned}@${version}`);
    expect(read("examples/README.md")).toContain(`${pinned}\` ${version}`);
  });

  it.each(RECIPE_EXAMPLES)("examples/recipes.json registers $clientId where examples/README.md starts it", ({ clientId, origin, callback, originVariable }) => {
    const file = JSON.parse(read("examples/recipes.json")) as { applications: { client_id: string; redirect_uris: string[]; post_logout_redirect_uris: string[]; identity_scopes: string[] }[] };
    const app = file.applications.find((a) => a.client_id === clientId);
    expect(app).toMatchObject({ redirect_uris: [`${origin}${callback}`], post_logout_redirect_uris: [`${origin}/signed-out`] });
    expect(app!.identity_scopes).toContain("offline_access");
    const readme = read("examples/README.md");
    expect(readme).toContain(`LATCHKEY_CLIENT_ID=${clientId}`);
    expect(readme).toContain(`${originVariable}=${origin} PORT=${new URL(origin).port}`);
  });
});
