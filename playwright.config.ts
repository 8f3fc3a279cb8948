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
 * `npm test` runs only these on the embedded database and every spec on PostgreSQL, the
 * production target (scripts/test.mjs sets E2E_SCOPE); `npm run test:e2e` runs every spec on either.
 */
export const EMBEDDED_PATH_SPECS = ["first-start.spec.ts", "demo.spec.ts", "console.spec.ts", "recipes.spec.ts", "hostnames.spec.ts"];
const embeddedPathOnly = process.env.E2E_SCOPE === "embedded";
/**
 * The first start runs on a fresh embedded data directory whatever the suite's database is, so
 * `npm test` on PostgreSQL leaves it to the embedded run instead of running it a second time. The
 * client libraries' recipes test what a library sends and accepts, which no database changes:
 * they run once, in the embedded run (whose e2e lane is the shorter), not again on PostgreSQL.
 */
const EMBEDDED_ONLY = process.env.E2E_SCOPE === "all" && process.env.DATABASE_URL ? ["**/first-start.spec.ts", "**/recipes.spec.ts"] : [];

export default defineConfig({
  testDir: "e2e",
  testMatch: embeddedPathOnly ? EMBEDDED_PATH_SPECS.map((spec) => `**/${spec}`) : "**/*.spec.ts",
  testIgnore: EMBEDDED_ONLY,
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
