/**
 * docs/recipes/: each page's program is the example of examples/ file for file, byte for byte; each
 * page's `## Set up` is all a reader needs in an empty folder (e2e/recipes.spec.ts builds every
 * recipe from it alone): it installs what the program imports, at the versions the page says it was
 * tested with, and, for npm, makes the folder's module format the program's; and the examples'
 * workspace file registers each example's addresses as examples/README.md starts it.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { programFiles, setUpWays, type ProgramFile } from "../../e2e/recipe-program";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

interface RecipeExample {
  page: string;
  language: string;
  /** How it is set up: npm with Node.js or Next.js, Debian's Python, Go. */
  stack: "node" | "next" | "python" | "go";
  example: string;
  clientId: string;
  origin: string;
  /** Where the library receives the sign-in's redirect, under the origin. */
  callback: string;
  /** The variable that names the application's origin. */
  originVariable: string;
}

const ANY = { callback: "/callback", originVariable: "APP_ORIGIN" };
const NEXT_AUTH = { language: "js", stack: "next", callback: "/api/auth/callback/latchkey" } as const;

const RECIPE_EXAMPLES: RecipeExample[] = [
  { ...ANY, page: "docs/recipes/authlib.md", language: "python", stack: "python", example: "examples/python-authlib", clientId: "recipe-python", origin: "http://localhost:4100" },
  { ...ANY, page: "docs/recipes/oauth4webapi.md", language: "js", stack: "node", example: "examples/oauth4webapi", clientId: "recipe-oauth4webapi", origin: "http://localhost:4300" },
  { ...ANY, page: "docs/recipes/passport.md", language: "js", stack: "node", example: "examples/passport", clientId: "recipe-passport", origin: "http://localhost:4400" },
  { ...ANY, page: "docs/recipes/go.md", language: "go", stack: "go", example: "examples/go", clientId: "recipe-go", origin: "http://localhost:4200" },
  { ...NEXT_AUTH, page: "docs/recipes/authjs.md", example: "examples/authjs", clientId: "recipe-authjs", origin: "http://localhost:4500", originVariable: "AUTH_URL" },
  { ...NEXT_AUTH, page: "docs/recipes/nextauth-v4.md", example: "examples/nextauth-v4", clientId: "recipe-nextauth", origin: "http://localhost:4600", originVariable: "NEXTAUTH_URL" },
];

/** The npm packages the program's modules import (`node:` modules and the program's own files left out). */
function jsImports(files: ProgramFile[]): string[] {
  // `import … from "x"`, `export … from "x"`, `import "x"`: no `=` or `(` before the specifier, unlike a declaration.
  const statement = /^\s*(?:(?:import|export)\b[^"';=()]*?\bfrom|import)\s*["']([^"']+)["']/gm;
  const specifiers = files.flatMap((file) => [...file.text.matchAll(statement)].map((match) => match[1]!));
  const packages = specifiers.filter((s) => !s.startsWith("node:") && !s.startsWith(".")).map((s) => s.split("/").slice(0, s.startsWith("@") ? 2 : 1).join("/"));
  return [...new Set(packages)].sort();
}

/** The standard library's modules a recipe may import (anything else is a package). */
const PYTHON_STDLIB = new Set(["base64", "dataclasses", "datetime", "functools", "hashlib", "hmac", "html", "http", "json", "logging", "os", "re", "secrets", "sys", "time", "typing", "urllib", "uuid"]);
function pythonImports(files: ProgramFile[]): string[] {
  const modules = files.flatMap((file) => [...file.text.matchAll(/^(?:from\s+(\w+)[\w.]*\s+import\b|import\s+(\w+))/gm)].map((match) => (match[1] ?? match[2])!));
  return [...new Set(modules)].filter((name) => !PYTHON_STDLIB.has(name)).sort();
}

/** Import paths whose first element is a host name: the standard library's have none. */
function goImports(files: ProgramFile[]): string[] {
  const paths = files.flatMap((file) => [...(/^import \(\n([\s\S]*?)^\)/m.exec(file.text)?.[1] ?? "").matchAll(/"([^"]+)"/g)].map((match) => match[1]!));
  return [...new Set(paths)].filter((p) => p.split("/")[0]!.includes(".")).sort();
}

/** Debian's name for a Go library's source package: golang.org/x/oauth2 is golang-golang-x-oauth2-dev. */
const debianGo = (importPath: string) => `golang-${importPath.replace(/^([\w-]+)\.\w+\//, "$1/").replace(/[/.]/g, "-")}-dev`;

/** The words of a command past its program and subcommand (`npm install`, `go get`, `apt-get install`). */
const argumentsOf = (command: string, program: RegExp) => command.replace(program, "").trim().split(/\s+/);

/** What the page says before its first section: the versions it was tested with. */
const opening = (page: string) => page.slice(0, page.indexOf("\n## "));

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
  it.each(RECIPE_EXAMPLES)("$page shows $example verbatim, file for file", ({ page, language, example }) => {
    const files = programFiles(read(page), language);
    for (const file of files) expect(file.text, `${example}/${file.path}`).toBe(read(`${example}/${file.path}`));
    expect(exampleFiles(example)).toEqual(files.map((file) => file.path).sort());
  });

  it.each(RECIPE_EXAMPLES.filter((recipe) => recipe.stack !== "next"))("$page says which port its program listens on (PORT), which APP_ORIGIN alone does not set", ({ page, language }) => {
    const text = read(page);
    expect(programFiles(text, language).map((file) => file.text).join("\n")).toMatch(/\bPORT\b/);
    const prose = text.replace(/```[\s\S]*?```/g, "");
    expect(prose).toMatch(/It listens on `PORT` \(4000 when unset\): set\s+`PORT` to the port `APP_ORIGIN` names\./);
    // Debian's packages are seen by the system Python only, not by one earlier on PATH.
    if (language === "python") expect(prose).toContain("`/usr/bin/python3 app.py`");
  });

  it.each(RECIPE_EXAMPLES.filter((recipe) => recipe.stack === "node" || recipe.stack === "next"))(
    "$page sets up an npm package of ES modules with exactly the packages its program imports, pinned to the versions it was tested with",
    ({ page, language, stack }) => {
      const text = read(page);
      const files = programFiles(text, language);
      const ways = setUpWays(text);
      expect(ways).toHaveLength(1);
      const { commands, run } = ways[0]!;
      expect(commands[0]).toBe("npm init -y");
      // `npm init -y` (npm 11) writes "type": "commonjs", and Next.js 16 then refuses the files, which are ES modules.
      expect(commands).toContain("npm pkg set type=module");
      const installs = commands.filter((command) => /^npm install\b/.test(command));
      expect(installs).toHaveLength(1);
      const words = argumentsOf(installs[0]!, /^npm install\b/);
      // package.json records the version, not a range from it.
      expect(words).toContain("--save-exact");
      const pins = words.filter((word) => !word.startsWith("-")).map((word) => /^(@?[^@\s]+)@(\d+\.\d+\.\d+(?:-[\w.]+)?)$/.exec(word) ?? word);
      for (const pin of pins) expect(pin, "name@exact-version").toBeInstanceOf(Array);
      const pinned = new Map((pins as RegExpExecArray[]).map((pin) => [pin[1]!, pin[2]!]));
      // Next.js needs React and React DOM beside it, which the files need not import.
      const needed = new Set([...jsImports(files), ...(stack === "next" ? ["next", "react", "react-dom"] : [])]);
      expect([...pinned.keys()].sort()).toEqual([...needed].sort());
      for (const [name, version] of pinned) expect(opening(text), `the version of ${name}`).toContain(` ${version}`);
      if (stack === "next") expect(run).toBe("npx next dev");
      else {
        expect(run).toBe("node app.mjs");
        expect(files.map((file) => file.path)).toContain("app.mjs");
      }
    },
  );

  it("docs/recipes/authlib.md sets up Debian's package of every module its program imports, for the system Python, and names them for pip", () => {
    const text = read("docs/recipes/authlib.md");
    const modules = pythonImports(programFiles(text, "python"));
    expect(modules).toEqual(["authlib", "flask", "markupsafe", "requests"]);
    const ways = setUpWays(text);
    expect(ways).toHaveLength(1);
    const { commands, run } = ways[0]!;
    expect(commands).toHaveLength(1);
    expect(commands[0]).toMatch(/^sudo apt-get install /);
    expect(argumentsOf(commands[0]!, /^sudo apt-get install\b/).sort()).toEqual(modules.map((name) => `python3-${name}`));
    expect(run).toBe("/usr/bin/python3 app.py");
    const pip = /`python3 -m venv \.venv && \.venv\/bin\/pip install ([^`]+)`/.exec(text.replace(/```[\s\S]*?```/g, ""))?.[1];
    expect(pip?.split(" ").sort()).toEqual(modules);
  });

  it("docs/recipes/go.md sets up with Go modules at the versions it was tested with, and offline with Debian's packages of the same libraries", () => {
    const text = read("docs/recipes/go.md");
    const imports = goImports(programFiles(text, "go"));
    expect(imports).toEqual(["github.com/coreos/go-oidc", "golang.org/x/oauth2"]);
    const [modules, debian, ...others] = setUpWays(text);
    expect(others).toEqual([]);

    expect(modules!.commands[0]).toMatch(/^go mod init \S+$/);
    const gets = modules!.commands.filter((command) => command.startsWith("go get "));
    expect(gets).toHaveLength(1);
    const pins = argumentsOf(gets[0]!, /^go get\b/).map((word) => /^([\w./-]+)@v(\d+\.\d+\.\d+)(?:\+incompatible)?$/.exec(word));
    expect(pins.map((pin) => pin?.[1]).sort()).toEqual(imports);
    for (const pin of pins) expect(opening(text), `the version of ${pin![1]}`).toContain(` ${pin![2]}`);
    expect(modules!.run).toBe("go run .");

    expect(debian!.commands).toHaveLength(1);
    expect(argumentsOf(debian!.commands[0]!, /^sudo apt-get install\b/).sort()).toEqual(["golang-go", ...imports.map(debianGo)].sort());
    expect(debian!.run).toBe("GO111MODULE=off GOPATH=/usr/share/gocode go run main.go");
  });

  it.each(RECIPE_EXAMPLES)("examples/recipes.json registers $clientId where examples/README.md starts it", ({ page, stack, clientId, origin, callback, originVariable }) => {
    const file = JSON.parse(read("examples/recipes.json")) as { applications: { client_id: string; redirect_uris: string[]; post_logout_redirect_uris: string[]; identity_scopes: string[] }[] };
    const app = file.applications.find((a) => a.client_id === clientId);
    expect(app).toMatchObject({ redirect_uris: [`${origin}${callback}`], post_logout_redirect_uris: [`${origin}/signed-out`] });
    expect(app!.identity_scopes).toContain("offline_access");
    const readme = read("examples/README.md");
    expect(readme).toContain(`LATCHKEY_CLIENT_ID=${clientId}`);
    expect(readme).toContain(`${originVariable}=${origin} PORT=${new URL(origin).port}`);
    // A Next.js example has no package.json: its page's set-up is the one to follow.
    if (stack === "next") expect(readme).toContain(`](../${page}#set-up)`);
  });
});
