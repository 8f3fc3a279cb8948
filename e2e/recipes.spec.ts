/**
 * docs/recipes/: each recipe's application, its code taken verbatim from its page (the same as its
 * examples/ folder: tests/docs/recipes.test.ts), registered from examples/recipes.json, runs against
 * the real hosted pages in Chromium: sign-in (state, nonce, PKCE, Basic, the ES256 ID token), the
 * session check, a refresh, hosted logout back to the registered destination, a second sign-in
 * (the hosted session is gone, so the password is asked again), and revocation, after which the
 * session check refuses the access token.
 *
 * The JavaScript recipes run on the test's own Node.js; the Next.js ones on this repository's
 * Next.js and React, with the next-auth version their example pins installed from the npm registry
 * into their own folder (skipped, with the reason printed, when the registry cannot be reached).
 * Recipes of other toolchains (Python, Go) are skipped, with the reason printed, where the
 * toolchain or its packages are missing: `.ci/run` installs them from Debian's packages.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { APP_PORT, LATCHKEY_PORT } from "./env";
import { importWorkspace, type ExportedWorkspace } from "./federation-admin";
import { programFiles } from "./recipe-program";

const GOPATH = "/usr/share/gocode";

interface Recipe {
  name: string;
  /** Its application in examples/recipes.json, and the origin examples/README.md starts it on. */
  clientId: string;
  exampleOrigin: string;
  page: string;
  /** The fence's language: the page's blocks of it that open with a file's path are the program (e2e/recipe-program.ts). */
  language: string;
  port: number;
  /** Null when the recipe can run here, else what is missing. */
  missing(): string | null;
  /** Installs the recipe's packages into `dir`: null when done, else why it cannot be done here (throws on any other failure). */
  install?(dir: string): string | null;
  /** Builds (where there is something to build) and starts the application in `dir`. */
  start(dir: string, env: NodeJS.ProcessEnv): ChildProcess;
  /** Paths fetched, in order, before the browser comes: the first answers once the application listens. */
  ready: string[];
}

/** A Python that has the recipe's packages: Debian's, whose packages the CI installs, before any other on the PATH. */
const PYTHON = ["/usr/bin/python3", "python3"].find((python) => spawnSync(python, ["-c", "import authlib, flask, requests"]).status === 0);

/** A JavaScript recipe: its packages are this repository's, and it runs on the test's own Node.js. */
const ON_THIS_NODE: Pick<Recipe, "missing" | "start" | "ready"> = {
  missing: () => null,
  start: (dir, env) => spawn(process.execPath, ["app.mjs"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] }),
  ready: ["/signed-out"],
};

const NEXT_CLI = path.join(process.cwd(), "node_modules", "next", "dist", "bin", "next");
/** What npm says when it cannot reach the registry (and its cache does not have the package). */
const UNREACHABLE = /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH)\b/;

/**
 * A Next.js recipe: this repository's Next.js and React (its folder is inside the checkout, so they
 * resolve from node_modules), and the next-auth its example's package.json pins, installed into its
 * folder alone: never a dependency of this repository, whose package.json and lockfile npm does not
 * touch here. `next dev` starts in about a second, where `next build` takes most of a minute.
 */
function nextApp(example: string): Pick<Recipe, "missing" | "install" | "start" | "ready"> {
  return {
    missing: () => (spawnSync("npm", ["--version"]).status === 0 ? null : "npm"),
    install: (dir) => {
      copyFileSync(path.join(process.cwd(), "examples", example, "package.json"), path.join(dir, "package.json"));
      // next-auth's peers (next, react, nodemailer, ...) are not installed: the first two are the checkout's.
      // npm's cache first; an unreachable registry fails in seconds rather than npm's minutes of retries.
      const args = ["install", "--no-package-lock", "--legacy-peer-deps", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund"];
      const npm = spawnSync("npm", [...args, "--fetch-retries=1", "--fetch-timeout=15000"], { cwd: dir, encoding: "utf8", timeout: 45_000 });
      if (npm.status === 0) return null;
      const what = `the npm registry, to install examples/${example}/package.json`;
      if (npm.error || npm.signal) return `${what} (npm install did not finish in 45 s)`;
      const unreachable = UNREACHABLE.exec(npm.stderr)?.[1];
      if (unreachable) return `${what} (${unreachable})`;
      throw new Error(`npm install in ${dir} failed:\n${npm.stderr}`);
    },
    // `next dev` warns of any other NODE_ENV (the test's environment may carry one).
    start: (dir, env) =>
      spawn(process.execPath, [NEXT_CLI, "dev"], { cwd: dir, env: { ...env, NODE_ENV: "development", NEXT_TELEMETRY_DISABLED: "1" }, stdio: ["ignore", "pipe", "pipe"] }),
    // Each route compiles on its first request: compiled before the browser comes.
    ready: ["/signed-out", "/", "/login", "/api/auth/providers"],
  };
}

const RECIPES: Recipe[] = [
  {
    name: "Node.js: oauth4webapi",
    clientId: "recipe-oauth4webapi",
    exampleOrigin: "http://localhost:4300",
    page: "oauth4webapi.md",
    language: "js",
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
    port: APP_PORT + 14,
    missing: () => (PYTHON ? null : "python3 with Authlib, Flask and requests (Debian: python3-authlib python3-flask python3-requests)"),
    start: (dir, env) => spawn(PYTHON!, ["app.py"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] }),
    ready: ["/signed-out"],
  },
  {
    name: "Go: x/oauth2 + go-oidc",
    clientId: "recipe-go",
    exampleOrigin: "http://localhost:4200",
    page: "go.md",
    language: "go",
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
    ready: ["/signed-out"],
  },
  {
    name: "Next.js: Auth.js (NextAuth v5)",
    clientId: "recipe-authjs",
    exampleOrigin: "http://localhost:4500",
    page: "authjs.md",
    language: "js",
    port: APP_PORT + 18,
    ...nextApp("authjs"),
  },
  {
    name: "Next.js: NextAuth v4",
    clientId: "recipe-nextauth",
    exampleOrigin: "http://localhost:4600",
    page: "nextauth-v4.md",
    language: "js",
    port: APP_PORT + 19,
    ...nextApp("nextauth-v4"),
  },
];

/** Writes the page's program, its files verbatim, into `dir`. */
function writeProgram(recipe: Recipe, dir: string): void {
  const page = readFileSync(path.join(process.cwd(), "docs", "recipes", recipe.page), "utf8");
  for (const file of programFiles(page, recipe.language)) {
    mkdirSync(path.dirname(path.join(dir, file.path)), { recursive: true });
    writeFileSync(path.join(dir, file.path), file.text);
  }
}

/** examples/recipes.json: the examples' applications and user, which this spec registers (moved to its ports). */
const EXAMPLES = JSON.parse(readFileSync(path.join(process.cwd(), "examples", "recipes.json"), "utf8")) as {
  applications: { client_id: string; secret?: string }[];
  users: { email: string; password: string }[];
};
const USER = EXAMPLES.users[0]!;

/** Waits until the application answers the first of `paths`, then requests the others once. */
async function waitUntilReady(origin: string, paths: string[], child: ChildProcess, output: () => string): Promise<void> {
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`the application exited (${child.exitCode}):\n${output()}`);
    try {
      await fetch(`${origin}${paths[0]}`);
      break;
    } catch {
      if (i === 300) throw new Error(`the application did not listen on ${origin}:\n${output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  // Not followed: a sign-in route's redirect goes to the hosted pages.
  for (const path of paths.slice(1)) await fetch(`${origin}${path}`, { redirect: "manual" });
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
      // An install, a start and first compiles, for the Next.js recipes.
      test.setTimeout(120_000);
      // The examples' file, this recipe's application alone, its addresses moved to this spec's port.
      const application = EXAMPLES.applications.find((a) => a.client_id === recipe.clientId);
      if (!application) throw new Error(`examples/recipes.json has no application ${recipe.clientId}`);
      const moved = JSON.parse(JSON.stringify({ ...application, secret }).replaceAll(recipe.exampleOrigin, origin)) as object;
      await importWorkspace({ ...EXAMPLES, id: workspaceId, name: `Recipes (${recipe.name})`, applications: [moved] } as unknown as ExportedWorkspace);
      // Inside the checkout, so that a JavaScript recipe resolves its package from node_modules.
      mkdirSync(path.join(process.cwd(), ".test-data"), { recursive: true });
      dir = mkdtempSync(path.join(process.cwd(), ".test-data", "recipe-"));
      writeProgram(recipe, dir);
      const cannot = recipe.install?.(dir) ?? null;
      if (cannot) console.log(`[recipes] ${recipe.name}: skipped here, cannot reach ${cannot}`);
      test.skip(cannot !== null, `cannot reach ${cannot}`);
      child = recipe.start(dir, {
        ...process.env,
        LATCHKEY_ISSUER: `http://localhost:${LATCHKEY_PORT}/t/${workspaceId}`,
        LATCHKEY_CLIENT_ID: clientId,
        LATCHKEY_CLIENT_SECRET: secret,
        APP_ORIGIN: origin,
        PORT: String(recipe.port),
        FLASK_SECRET_KEY: randomBytes(32).toString("hex"),
        SESSION_SECRET: randomBytes(32).toString("hex"),
        AUTH_URL: origin,
        AUTH_SECRET: randomBytes(32).toString("hex"),
        NEXTAUTH_URL: origin,
        NEXTAUTH_SECRET: randomBytes(32).toString("hex"),
      });
      child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
      await waitUntilReady(origin, recipe.ready, child, () => output);
    });

    test.afterAll(async () => {
      if (child && child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child!.once("exit", resolve));
        child.kill("SIGTERM");
        // Before its folder goes: a development server writes there until it exits.
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      }
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    test("signs in on the hosted pages, checks the session, refreshes, signs out, signs in again and revokes", async ({ page }) => {
      const status = page.locator("#status");
      await page.goto(`${origin}/`);
      await page.getByRole("link", { name: "Sign in" }).click();
      await hostedSignIn(page, workspaceId);
      // Back through the redirect URI: code exchanged with Basic and PKCE, the ES256 ID token's nonce checked (and state, where the library checks it).
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
