import { existsSync } from "node:fs";
import { defineConfig, devices } from "@playwright/test";
import { ACME_ISSUER, APP, APP_PORT, HOST_RESOLVER_RULES, ISSUER, LATCHKEY_PORT, SMTP_PORT } from "./e2e/env";

/**
 * End-to-end tests against the production build: e2e/serve.mjs builds the app, seeds a fresh
 * data store from e2e/fixtures/e2e-workspace.json and starts server.ts on port 3111; the
 * example customer application (e2e/customer-app.ts, openid-client) listens on 3112. Set
 * E2E_PORT / E2E_APP_PORT to move them (e2e/env.ts).
 */

// A system Chromium when there is one (Debian's /usr/bin/chromium, or CHROMIUM_PATH); otherwise
// the browser Playwright installed (`npx playwright install chromium`). Never downloads here.
const systemChromium = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find(
  (candidate): candidate is string => !!candidate && existsSync(candidate),
);

const ci = !!process.env.CI;

/**
 * The specs of the embedded database's own path: its first start on a fresh data directory (what
 * `npm start` does on a fresh clone), the demo sign-in and the console setup; and the workspace
 * hostnames, whose host gate reads the database before a hostname serves anything (seconds).
 * `npm test` runs these on the embedded database (scripts/test.mjs sets E2E_SCOPE), and on
 * PostgreSQL every spec but those below; `npm run test:e2e` runs every spec on either.
 */
export const EMBEDDED_PATH_SPECS = ["first-start.spec.ts", "demo.spec.ts", "console.spec.ts", "recipes.spec.ts", "hostnames.spec.ts"];
/**
 * Specs that `npm test` runs once, in the embedded run, and not again on PostgreSQL: what no
 * database changes. The first start runs on a fresh embedded data directory whatever the suite's
 * database; the client libraries' recipes test what a library sends and accepts; the console's
 * setup is the embedded path's first hour (its operations run on both databases in the unit
 * suite, and the console's other specs run on PostgreSQL); the page specs
 * test what the pages show and how (their accessibility, languages, branding and headers, the
 * console without JavaScript), one request at a time. The PostgreSQL run's e2e lane, every other
 * spec, is the longer one and bounds that run; the embedded run's has room beside its type check
 * and lint, which only its run does cold (`.ci/run` runs the embedded run first).
 */
export const ONCE_ON_EMBEDDED = ["first-start.spec.ts", "recipes.spec.ts", "console.spec.ts", "accessibility.spec.ts", "branding.spec.ts", "i18n.spec.ts", "hosted-pages.spec.ts", "security-headers.spec.ts", "console-no-javascript.spec.ts", "console-layout.spec.ts"];
const embeddedScope = process.env.E2E_SCOPE === "embedded";
const specs = (names: readonly string[]) => names.map((spec) => `**/${spec}`);

export default defineConfig({
  testDir: "e2e",
  testMatch: embeddedScope ? specs([...new Set([...EMBEDDED_PATH_SPECS, ...ONCE_ON_EMBEDDED])]) : "**/*.spec.ts",
  // `npm test` on PostgreSQL (E2E_SCOPE=all there) leaves these to the embedded run.
  testIgnore: process.env.E2E_SCOPE === "all" && process.env.DATABASE_URL ? specs(ONCE_ON_EMBEDDED) : [],
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: ci,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: ci ? [["list"]] : [["list"], ["html", { open: "never" }]],
  use: {
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
  projects: [
    {
      name: "chromium",
      use: {
        ...devices["Desktop Chrome"],
        launchOptions: {
          executablePath: systemChromium,
          args: [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--no-first-run",
            // The workspace hostnames of e2e/hostnames.spec.ts reach the local server; no DNS is asked.
            `--host-resolver-rules=${HOST_RESOLVER_RULES}`,
            `--unsafely-treat-insecure-origin-as-secure=${new URL(ACME_ISSUER).origin}`,
          ],
        },
      },
    },
  ],
  webServer: [
    {
      command: "node e2e/serve.mjs",
      url: `${ISSUER}/.well-known/openid-configuration`,
      // Email goes to the SMTP server the email specs start (e2e/smtp-inbox.ts), not to the outbox.
      // The server's request lines would fill the run's output (failures are still logged): LOG_LEVEL=info shows them.
      env: { E2E_PORT: String(LATCHKEY_PORT), E2E_APP_PORT: String(APP_PORT), SMTP_URL: `smtp://127.0.0.1:${SMTP_PORT}`, LOG_LEVEL: process.env.LOG_LEVEL ?? "warn" },
      // `next build` on two cores takes a few minutes.
      timeout: 240_000,
      reuseExistingServer: !ci,
      stdout: "pipe",
      stderr: "pipe",
      // SIGTERM (not the default SIGKILL) so serve.mjs can drop its database / data directory.
      gracefulShutdown: { signal: "SIGTERM", timeout: 20_000 },
    },
    {
      command: "node_modules/.bin/tsx e2e/customer-app.ts",
      url: `${APP}/health`,
      env: { PORT: String(APP_PORT), LATCHKEY_ISSUER: ISSUER },
      timeout: 30_000,
      reuseExistingServer: !ci,
      stdout: "pipe",
      stderr: "pipe",
      gracefulShutdown: { signal: "SIGTERM", timeout: 5_000 },
    },
  ],
});
