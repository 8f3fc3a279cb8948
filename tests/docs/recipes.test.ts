/**
 * docs/recipes/: each page's program is the example of examples/ byte for byte, and the examples'
 * workspace file registers each example's addresses as examples/README.md starts it
 * (e2e/recipes.spec.ts runs the programs against the hosted pages).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

const RECIPE_EXAMPLES = [
  { page: "docs/recipes/authlib.md", language: "python", example: "examples/python-authlib/app.py", clientId: "recipe-python", origin: "http://localhost:4100" },
  { page: "docs/recipes/oauth4webapi.md", language: "js", example: "examples/oauth4webapi/app.mjs", clientId: "recipe-oauth4webapi", origin: "http://localhost:4300" },
  { page: "docs/recipes/passport.md", language: "js", example: "examples/passport/app.mjs", clientId: "recipe-passport", origin: "http://localhost:4400" },
  { page: "docs/recipes/go.md", language: "go", example: "examples/go/main.go", clientId: "recipe-go", origin: "http://localhost:4200" },
];

describe("the recipes", () => {
  it.each(RECIPE_EXAMPLES)("$page shows $example verbatim", ({ page, language, example }) => {
    const block = new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, "m").exec(read(page));
    expect(block?.[1]).toBe(read(example));
  });

  it.each(RECIPE_EXAMPLES)("examples/recipes.json registers $clientId where examples/README.md starts it", ({ clientId, origin }) => {
    const file = JSON.parse(read("examples/recipes.json")) as { applications: { client_id: string; redirect_uris: string[]; post_logout_redirect_uris: string[]; identity_scopes: string[] }[] };
    const app = file.applications.find((a) => a.client_id === clientId);
    expect(app).toMatchObject({ redirect_uris: [`${origin}/callback`], post_logout_redirect_uris: [`${origin}/signed-out`] });
    expect(app!.identity_scopes).toContain("offline_access");
    const readme = read("examples/README.md");
    expect(readme).toContain(`LATCHKEY_CLIENT_ID=${clientId}`);
    expect(readme).toContain(`APP_ORIGIN=${origin} PORT=${new URL(origin).port}`);
  });
});
