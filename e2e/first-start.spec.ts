/**
 * A fresh clone's first run, as the README gives it: `npm start` (scripts/start.mjs, the production
 * build and server exactly as an operator runs them) on an empty data directory, with neither
 * DATABASE_URL nor MASTER_KEY set. The embedded database, its master key, the migrations and the demo
 * workspace are all created by that start; the demo sign-in then works in Chromium, the printed
 * console setup link opens the setup form, and a second start on the same directory keeps the data
 * and no longer shows the demo-web secret.
 *
 * It starts its own server (port 3131) beside the suite's, so it runs on either database.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { DEMO_USER } from "../lib/workspaces/demo";
import { demoHostedSignIn } from "./demo-sign-in";

const PORT = 3131;
const BASE = `http://localhost:${PORT}`;
const DATA_DIR = path.join(process.cwd(), ".test-data", `first-start-${process.pid}`);

interface Started {
  process: ChildProcess;
  output: () => string;
}

/** `npm start` as a fresh clone runs it; resolves once it prints its console line (the last of the start-up lines). */
async function npmStart(): Promise<Started> {
  // What a fresh clone's shell has: no database URL, master key or public address of an earlier setup.
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(PORT), DATA_DIR };
  for (const name of ["DATABASE_URL", "MASTER_KEY", "PUBLIC_URL", "SMTP_URL", "WEB_CONCURRENCY"]) delete env[name];
  const child: ChildProcess = spawn(process.execPath, ["scripts/start.mjs"], { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk));
  await expect
    .poll(() => {
      if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}):\n${output}`);
      return /^ {2}Console( setup)?: /m.test(output);
    }, { timeout: 60_000 })
    .toBe(true);
  return { process: child, output: () => output };
}

async function stop(started: Started): Promise<void> {
  if (started.process.exitCode !== null) return;
  const exited = new Promise((resolve) => started.process.once("exit", resolve));
  started.process.kill("SIGTERM");
  await exited;
}

const line = (output: string, label: string) => output.match(new RegExp(`^ {2}${label}:\\s+(\\S+)`, "m"))?.[1];
/** The labels of the start-up lines ("  Demo issuer:     …"), in order. */
const labels = (output: string) => [...output.matchAll(/^ {2}(\S[^:\n]*): /gm)].map((m) => m[1]!);
/** The README's sample of what the first start prints. */
function readmeSample(): string {
  const readme = readFileSync(path.join(process.cwd(), "README.md"), "utf8");
  const from = readme.indexOf("then prints something like:");
  return /^```\n([\s\S]*?)^```$/m.exec(readme.slice(from))![1]!;
}

test.beforeAll(() => rmSync(DATA_DIR, { recursive: true, force: true }));
test.afterAll(() => rmSync(DATA_DIR, { recursive: true, force: true }));

test("npm start on a fresh data directory: the demo sign-in, the console setup link, and a second start on the same data", async ({ page }) => {
  test.setTimeout(180_000);
  const first = await npmStart();
  let setupUrl: string | undefined;
  try {
    const output = first.output();
    expect(output).toContain(`Latchkey is listening on ${BASE} (embedded database in ${DATA_DIR})`);
    expect(line(output, "Demo issuer")).toBe(`${BASE}/t/demo`);
    expect(line(output, "Demo sign-in")).toBe(DEMO_USER.email);
    expect(line(output, "demo-web secret")).toMatch(/^lks_/);
    // The README's sample shows the same lines, in the same order.
    expect(labels(readmeSample())).toEqual(labels(output));
    expect(readmeSample()).toMatch(/^Latchkey is listening on http:\/\/localhost:3000 \(embedded database in /m);
    setupUrl = line(output, "Console setup");
    expect(setupUrl).toMatch(new RegExp(`^${BASE}/console/setup\\?token=`));

    // Discovery answers under the printed issuer.
    const discovery = await (await fetch(`${BASE}/t/demo/.well-known/openid-configuration`)).json();
    expect(discovery.issuer).toBe(`${BASE}/t/demo`);

    // The demo sign-in, in the browser, as the landing page offers it.
    await page.goto(`${BASE}/`);
    await page.getByRole("link", { name: "Sign in to the demo application" }).click();
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await demoHostedSignIn(page, BASE);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Signed in as Demo User");
    // Security settings, through the backend handoff with the secret the first start derived: one click to the portal.
    await expect(page.locator(`form[action="/demo/account-security/start"]`)).toHaveCount(1);
    await page.getByRole("button", { name: "Security settings" }).click();
    await expect(page).toHaveURL(`${BASE}/t/demo/account`);
    await expect(page.getByRole("link", { name: "Back to Demo application" })).toHaveAttribute("href", `${BASE}/demo`);

    // The printed one-time link opens the setup form.
    await page.goto(setupUrl!);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Create the first operator");
  } finally {
    await stop(first);
  }

  const second = await npmStart();
  try {
    const output = second.output();
    expect(output).toContain(`Latchkey is listening on ${BASE} (embedded database in ${DATA_DIR})`);
    // The demo workspace and its secret were kept: the secret is shown only once.
    expect(line(output, "Demo sign-in")).toBe(DEMO_USER.email);
    expect(line(output, "demo-web secret")).toBeUndefined();
    // No operator exists yet, so a new setup link is printed (the first one is no longer the link to use).
    expect(line(output, "Console setup")).toMatch(new RegExp(`^${BASE}/console/setup\\?token=`));
  } finally {
    await stop(second);
  }
});
