/**
 * docs/recipes/: each recipe's application, its code taken verbatim from its page (the same as its
 * examples/ folder: tests/docs/recipes.test.ts), registered from examples/recipes.json, runs against
 * the real hosted pages in Chromium: sign-in (state, nonce, PKCE, Basic, the ES256 ID token), the
 * session check, a refresh, hosted logout back to the registered destination, a second sign-in
 * (the hosted session is gone, so the password is asked again), and revocation, after which the
 * session check refuses the access token.
 *
 * The JavaScript recipes run on the test's own Node.js. Recipes of other toolchains (Python, Go) are skipped, with the reason printed, where the
 * toolchain or its packages are missing: `.ci/run` installs them from Debian's packages.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { APP_PORT, LATCHKEY_PORT } from "./env";
import { importWorkspace, type ExportedWorkspace } from "./federation-admin";

const GOPATH = "/usr/share/gocode";

interface Recipe {
  name: string;
  /** Its application in examples/recipes.json, and the origin examples/README.md starts it on. */
  clientId: string;
  exampleOrigin: string;
  page: string;
  /** The fence's language: the page's first block of it is the whole program. */
  language: string;
  file: string;
  port: number;
  /** Null when the recipe can run here, else what is missing. */
  missing(): string | null;
  /** Builds (where there is something to build) and starts the application in `dir`. */
  start(dir: string, env: NodeJS.ProcessEnv): ChildProcess;
}

/** A Python that has the recipe's packages: Debian's, whose packages the CI installs, before any other on the PATH. */
const PYTHON = ["/usr/bin/python3", "python3"].find((python) => spawnSync(python, ["-c", "import authlib, flask, requests"]).status === 0);

/** A JavaScript recipe: its packages are this repository's, and it runs on the test's own Node.js. */
const ON_THIS_NODE: Pick<Recipe, "missing" | "start"> = {
  missing: () => null,
  start: (dir, env) => spawn(process.execPath, ["app.mjs"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] }),
};

const RECIPES: Recipe[] = [
  {
    name: "Node.js: oauth4webapi",
    clientId: "recipe-oauth4webapi",
    exampleOrigin: "http://localhost:4300",
    page: "oauth4webapi.md",
    language: "js",
    file: "app.mjs",
    port: APP_PORT + 16,
    // A dependency of this repository (openid-client is built on it): always here.
    ...ON_THIS_NODE,
  },
  {
    name: "Node.js: Passport with openid-client/passport",
    clientId: "recipe-passport",
    exampleOrigin: "http://localhost:4400",
    page: "passport.md",
    language: "js",
    file: "app.mjs",
    port: APP_PORT + 17,
    // Passport, Express and express-session are this repository's dev dependencies: always here.
    ...ON_THIS_NODE,
  },
  {
    name: "Python: Flask + Authlib",
    clientId: "recipe-python",
    exampleOrigin: "http://localhost:4100",
    page: "authlib.md",
    language: "python",
    file: "app.py",
    port: APP_PORT + 14,
    missing: () => (PYTHON ? null : "python3 with Authlib, Flask and requests (Debian: python3-authlib python3-flask python3-requests)"),
    start: (dir, env) => spawn(PYTHON!, ["app.py"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] }),
  },
  {
    name: "Go: x/oauth2 + go-oidc",
    clientId: "recipe-go",
    exampleOrigin: "http://localhost:4200",
    page: "go.md",
    language: "go",
    file: "main.go",
    port: APP_PORT + 15,
    missing: () =>
      spawnSync("go", ["version"]).status === 0 && existsSync(`${GOPATH}/src/github.com/coreos/go-oidc`) && existsSync(`${GOPATH}/src/golang.org/x/oauth2`)
        ? null
        : "Go with go-oidc and x/oauth2 (Debian: golang-go golang-github-coreos-go-oidc-dev golang-golang-x-oauth2-dev)",
    start: (dir, env) => {
      const goEnv = { ...env, GO111MODULE: "off", GOPATH, GOFLAGS: "", GOCACHE: path.join(dir, ".cache") };
      const built = spawnSync("go", ["build", "-o", "app", "main.go"], { cwd: dir, env: goEnv, encoding: "utf8" });
      if (built.status !== 0) throw new Error(`go build failed:\n${built.stderr}`);
      return spawn(path.join(dir, "app"), [], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
    },
  },
];

/** The page's program: its first fenced block of the recipe's language, verbatim. */
function programOf(recipe: Recipe): string {
  const page = readFileSync(path.join(process.cwd(), "docs", "recipes", recipe.page), "utf8");
  const block = new RegExp(`^\`\`\`${recipe.language}\\n([\\s\\S]*?)^\`\`\`$`, "m").exec(page);
  if (!block) throw new Error(`docs/recipes/${recipe.page} has no ${recipe.language} block`);
  return block[1]!;
}

/** examples/recipes.json: the examples' applications and user, which this spec registers (moved to its ports). */
const EXAMPLES = JSON.parse(readFileSync(path.join(process.cwd(), "examples", "recipes.json"), "utf8")) as {
  applications: { client_id: string; secret?: string }[];
  users: { email: string; password: string }[];
};
const USER = EXAMPLES.users[0]!;

async function waitForListening(url: string, child: ChildProcess, output: () => string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`the application exited (${child.exitCode}):\n${output()}`);
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`the application did not listen on ${url}:\n${output()}`);
}

async function hostedSignIn(page: Page, workspaceId: string): Promise<void> {
  await expect(page).toHaveURL(new RegExp(`/t/${workspaceId}/sign-in`));
  await page.getByLabel("Email", { exact: true }).fill(USER.email);
  await page.getByLabel("Password", { exact: true }).fill(USER.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

for (const recipe of RECIPES) {
  test.describe(recipe.name, () => {
    const missing = recipe.missing();
    if (missing) console.log(`[recipes] ${recipe.name}: skipped here, missing ${missing}`);
    test.skip(missing !== null, `missing ${missing}`);

    const origin = `http://localhost:${recipe.port}`;
    const workspaceId = `recipes-${randomBytes(3).toString("hex")}`;
    const clientId = recipe.clientId;
    const secret = `lks_${randomBytes(24).toString("base64url")}`;
    let child: ChildProcess | undefined;
    let dir = "";
    let output = "";

    test.beforeAll(async () => {
      // The examples' file, this recipe's application alone, its addresses moved to this spec's port.
      const application = EXAMPLES.applications.find((a) => a.client_id === recipe.clientId);
      if (!application) throw new Error(`examples/recipes.json has no application ${recipe.clientId}`);
      const moved = JSON.parse(JSON.stringify({ ...application, secret }).replaceAll(recipe.exampleOrigin, origin)) as object;
      await importWorkspace({ ...EXAMPLES, id: workspaceId, name: `Recipes (${recipe.name})`, applications: [moved] } as unknown as ExportedWorkspace);
      // Inside the checkout, so that a JavaScript recipe resolves its package from node_modules.
      mkdirSync(path.join(process.cwd(), ".test-data"), { recursive: true });
      dir = mkdtempSync(path.join(process.cwd(), ".test-data", "recipe-"));
      writeFileSync(path.join(dir, recipe.file), programOf(recipe));
      child = recipe.start(dir, {
        ...process.env,
        LATCHKEY_ISSUER: `http://localhost:${LATCHKEY_PORT}/t/${workspaceId}`,
        LATCHKEY_CLIENT_ID: clientId,
        LATCHKEY_CLIENT_SECRET: secret,
        APP_ORIGIN: origin,
        PORT: String(recipe.port),
        FLASK_SECRET_KEY: randomBytes(32).toString("hex"),
        SESSION_SECRET: randomBytes(32).toString("hex"),
      });
      child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
      await waitForListening(`${origin}/signed-out`, child, () => output);
    });

    test.afterAll(async () => {
      child?.kill("SIGTERM");
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    test("signs in on the hosted pages, checks the session, refreshes, signs out, signs in again and revokes", async ({ page }) => {
      const status = page.locator("#status");
      await page.goto(`${origin}/`);
      await page.getByRole("link", { name: "Sign in" }).click();
      await hostedSignIn(page, workspaceId);
      // Back through /callback: state checked, code exchanged with Basic and PKCE, ES256 ID token and nonce verified.
      await expect(page.getByRole("heading", { level: 1 })).toHaveText(`Signed in as ${USER.email}`, { timeout: 15_000 });

      await page.getByRole("button", { name: "Check session" }).click();
      await expect(status).toHaveText("Session active");
      await page.getByRole("button", { name: "Refresh tokens" }).click();
      await expect(status).toHaveText("Tokens refreshed");
      await page.getByRole("button", { name: "Check session" }).click();
      await expect(status).toHaveText("Session active");

      // Hosted logout (exactly client_id and post_logout_redirect_uri) comes back to the registered page.
      await page.getByRole("button", { name: "Sign out" }).click();
      await expect(page).toHaveURL(`${origin}/signed-out`);
      await page.getByRole("link", { name: "Sign in again" }).click();
      // The hosted session ended with the logout: the password is asked again.
      await hostedSignIn(page, workspaceId);
      await expect(page.getByRole("heading", { level: 1 })).toHaveText(`Signed in as ${USER.email}`, { timeout: 15_000 });

      await page.getByRole("button", { name: "Disconnect" }).click();
      await expect(page.getByRole("heading", { level: 1 })).toHaveText("Disconnected");
      await expect(status).toHaveText("Session check after revocation: HTTP 401");
      expect(output).not.toContain("Traceback");
    });
  });
}
