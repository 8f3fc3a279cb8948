/**
 * docs/recipes/: each recipe is built from its page alone, as a reader builds it: in a fresh empty
 * folder outside this checkout (so nothing resolves from this repository's node_modules), the
 * commands of the page's `## Set up` block, then the page's files verbatim (the same as its
 * examples/ folder: tests/docs/recipes.test.ts), then the block's last line starts it. Registered
 * from examples/recipes.json, it runs against the real hosted pages in Chromium: sign-in (state,
 * nonce, PKCE, Basic, the ES256 ID token), the session check, a refresh, hosted logout back to the
 * registered destination, a second sign-in (the hosted session is gone, so the password is asked
 * again), and revocation, after which the session check refuses the access token.
 *
 * npm installs from its cache first (`.ci/run`'s `npm install` fills it with the versions the pages
 * pin where this repository uses the same). A page may show several ways to set up; a way whose
 * registry cannot be reached (the Go module proxy) gives way to the next, Debian's packages, with
 * the reason printed. `apt-get install` is not run: the packages it names must be installed already
 * (`.ci/run` installs them). Only where no way can run here is the recipe skipped, with the reasons.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { APP_PORT, LATCHKEY_PORT } from "./env";
import { importWorkspace, type ExportedWorkspace } from "./federation-admin";
import { programFiles, setUpWays, type SetUpWay } from "./recipe-program";

interface Recipe {
  name: string;
  /** Its application in examples/recipes.json, and the origin examples/README.md starts it on. */
  clientId: string;
  exampleOrigin: string;
  page: string;
  /** The fence's language: the page's blocks of it that open with a file's path are the program (e2e/recipe-program.ts). */
  language: string;
  port: number;
  /** Paths fetched, in order, before the browser comes: the first answers once the application listens. */
  ready: string[];
}

/** Each route of a development server compiles on its first request: compiled before the browser comes. */
const NEXT_READY = ["/signed-out", "/", "/login", "/api/auth/providers"];

const RECIPES: Recipe[] = [
  { name: "Node.js: oauth4webapi", clientId: "recipe-oauth4webapi", exampleOrigin: "http://localhost:4300", page: "oauth4webapi.md", language: "js", port: APP_PORT + 16, ready: ["/signed-out"] },
  { name: "Node.js: Passport with openid-client/passport", clientId: "recipe-passport", exampleOrigin: "http://localhost:4400", page: "passport.md", language: "js", port: APP_PORT + 17, ready: ["/signed-out"] },
  { name: "Python: Flask + Authlib", clientId: "recipe-python", exampleOrigin: "http://localhost:4100", page: "authlib.md", language: "python", port: APP_PORT + 14, ready: ["/signed-out"] },
  { name: "Go: x/oauth2 + go-oidc", clientId: "recipe-go", exampleOrigin: "http://localhost:4200", page: "go.md", language: "go", port: APP_PORT + 15, ready: ["/signed-out"] },
  { name: "Next.js: Auth.js (NextAuth v5)", clientId: "recipe-authjs", exampleOrigin: "http://localhost:4500", page: "authjs.md", language: "js", port: APP_PORT + 18, ready: NEXT_READY },
  { name: "Next.js: NextAuth v4", clientId: "recipe-nextauth", exampleOrigin: "http://localhost:4600", page: "nextauth-v4.md", language: "js", port: APP_PORT + 19, ready: NEXT_READY },
];

/**
 * The environment of a reader's shell: none of the npm_* variables `npx`/`npm test` set for this
 * run (npm_config_local_prefix alone would make npm install into this checkout), nor NODE_ENV,
 * which `next dev` warns of. npm takes its cache first, and gives up on an unreachable registry in
 * seconds rather than minutes of retries.
 */
function readerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    npm_config_prefer_offline: "true",
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
    npm_config_fetch_retries: "1",
    npm_config_fetch_timeout: "15000",
    NEXT_TELEMETRY_DISABLED: "1",
  };
  const ours = /^npm_config_(prefer_offline|audit|fund|update_notifier|fetch_retries|fetch_timeout)$/;
  for (const name of Object.keys(env)) if ((/^npm_/i.test(name) && !ours.test(name)) || ["INIT_CWD", "NODE", "NODE_ENV"].includes(name)) delete env[name];
  return env;
}

/** What npm and go say when a registry cannot be reached (and no cache has the package). */
const UNREACHABLE = /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|no such host|connection refused|i\/o timeout|network is unreachable)\b/;
/** `apt-get install` and its packages; it is not run here (it needs root and Debian's mirrors). */
const APT_INSTALL = /^(?:sudo\s+)?apt(?:-get)?\s+install\s+(.*)$/;

const missingDebianPackages = (packages: string[]) => packages.filter((name) => spawnSync("dpkg", ["-s", name], { stdio: "ignore" }).status !== 0);

/** The command a line runs, past its variable assignments (`GO111MODULE=off go run ...`). */
const commandOf = (line: string) => line.split(/\s+/).find((word) => !/^\w+=/.test(word))!;
const available = (command: string) => spawnSync("sh", ["-c", 'command -v "$0"', command], { stdio: "ignore" }).status === 0;

/**
 * Runs a way's set-up commands in `dir`, one at a time as a reader runs them: null when done, else
 * why this way cannot be set up here (a command, a Debian package or a registry is missing). Any
 * other failure throws: the page's commands do not work.
 */
function setUp(way: SetUpWay, dir: string, env: NodeJS.ProcessEnv): string | null {
  // The toolchain and Debian's packages first: nothing is installed for a way that cannot run.
  for (const line of [...way.commands, way.run]) {
    const apt = APT_INSTALL.exec(line);
    if (!apt) {
      if (!available(commandOf(line))) return `${commandOf(line)}, for \`${line}\``;
      continue;
    }
    const packages = apt[1]!.split(/\s+/).filter((word) => !word.startsWith("-"));
    if (!available("dpkg")) return `dpkg, to find ${packages.join(" ")}`;
    const missing = missingDebianPackages(packages);
    if (missing.length > 0) return `the Debian packages ${missing.join(" ")}`;
  }
  for (const line of way.commands.filter((line) => !APT_INSTALL.test(line))) {
    const ran = spawnSync("sh", ["-c", line], { cwd: dir, env, encoding: "utf8", timeout: 240_000 });
    if (ran.status === 0) continue;
    if (ran.error || ran.signal) return `\`${line}\` to finish within 240 s`;
    const unreachable = UNREACHABLE.exec(ran.stderr + ran.stdout)?.[1];
    if (unreachable) return `the registry of \`${line}\` (${unreachable})`;
    throw new Error(`\`${line}\` failed in ${dir}:\n${ran.stdout}${ran.stderr}`);
  }
  return null;
}

/** Writes the page's program, its files verbatim, into `dir`. */
function writeProgram(page: string, language: string, dir: string): void {
  for (const file of programFiles(page, language)) {
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

/**
 * Waits until the application answers the first of `paths`, then requests the others once. A server
 * error on any of them fails here, with the application's output (what a set-up that leaves the
 * module format wrong gives: Next.js answers 500 on every route).
 */
async function waitUntilReady(origin: string, paths: string[], child: ChildProcess, output: () => string): Promise<void> {
  let first: Response;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`the application exited (${child.exitCode}):\n${output()}`);
    try {
      first = await fetch(`${origin}${paths[0]}`);
      break;
    } catch {
      // `go run` compiles first: on two cores and a cold build cache, most of a minute.
      if (i === 1200) throw new Error(`the application did not listen on ${origin}:\n${output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  // Not followed: a sign-in route's redirect goes to the hosted pages.
  const answers = [first];
  for (const path of paths.slice(1)) answers.push(await fetch(`${origin}${path}`, { redirect: "manual" }));
  answers.forEach((answer, i) => {
    if (answer.status >= 500) throw new Error(`${paths[i]} answered HTTP ${answer.status}:\n${output()}`);
  });
}

/**
 * Ends the process group the application's command started, and waits until every process of it is
 * gone: a development server writes into its folder until it exits, and the folder goes next.
 */
async function stopProcessGroup(pid: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(-pid, "SIGTERM");
  for (let i = 0; i < 100 && alive(); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  if (alive()) process.kill(-pid, "SIGKILL");
  for (let i = 0; i < 20 && alive(); i++) await new Promise((resolve) => setTimeout(resolve, 100));
}

async function hostedSignIn(page: Page, workspaceId: string): Promise<void> {
  await expect(page).toHaveURL(new RegExp(`/t/${workspaceId}/sign-in`));
  await page.getByLabel("Email", { exact: true }).fill(USER.email);
  await page.getByLabel("Password", { exact: true }).fill(USER.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

for (const recipe of RECIPES) {
  test.describe(recipe.name, () => {
    const origin = `http://localhost:${recipe.port}`;
    const workspaceId = `recipes-${randomBytes(3).toString("hex")}`;
    const clientId = recipe.clientId;
    const secret = `lks_${randomBytes(24).toString("base64url")}`;
    let child: ChildProcess | undefined;
    let root = "";
    let output = "";

    test.beforeAll(async () => {
      // An install from npm's cache, a build or a start, and first compiles.
      test.setTimeout(300_000);
      const page = readFileSync(path.join(process.cwd(), "docs", "recipes", recipe.page), "utf8");
      const env = readerEnv();
      root = mkdtempSync(path.join(tmpdir(), "latchkey-recipe-"));
      // The first way that can be set up here; each in an empty folder of its own.
      let dir = "";
      let way: SetUpWay | undefined;
      const cannot: string[] = [];
      const started = Date.now();
      for (const [i, candidate] of setUpWays(page).entries()) {
        // A fixed name: `npm init -y` names the package after its folder.
        const folder = path.join(root, `app-${i + 1}`);
        mkdirSync(folder);
        const why = setUp(candidate, folder, env);
        if (why === null) {
          [dir, way] = [folder, candidate];
          break;
        }
        cannot.push(`set-up ${i + 1} of ${recipe.page} needs ${why}`);
      }
      if (cannot.length > 0) console.log(`[recipes] ${recipe.name}: ${cannot.join("; ")}${way ? `; ran the next one: \`${way.run}\`` : "; skipped here"}`);
      test.skip(!way, cannot.join("; "));
      // The spec's share of CI's time: npm's installs, from its cache when CI's own install filled it.
      console.log(`[recipes] ${recipe.name}: set up from ${recipe.page} in ${((Date.now() - started) / 1000).toFixed(1)} s`);

      // The examples' file, this recipe's application alone, its addresses moved to this spec's port.
      const application = EXAMPLES.applications.find((a) => a.client_id === recipe.clientId);
      if (!application) throw new Error(`examples/recipes.json has no application ${recipe.clientId}`);
      const moved = JSON.parse(JSON.stringify({ ...application, secret }).replaceAll(recipe.exampleOrigin, origin)) as object;
      await importWorkspace({ ...EXAMPLES, id: workspaceId, name: `Recipes (${recipe.name})`, applications: [moved] } as unknown as ExportedWorkspace);

      writeProgram(page, recipe.language, dir);
      // Its own process group: `npx next dev` and `go run` start the server as a child of their own.
      child = spawn("sh", ["-c", way!.run], {
        cwd: dir,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          ...env,
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
        },
      });
      child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
      await waitUntilReady(origin, recipe.ready, child, () => output);
    });

    test.afterAll(async () => {
      if (child?.pid) await stopProcessGroup(child.pid);
      if (root) rmSync(root, { recursive: true, force: true, maxRetries: 3 });
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
