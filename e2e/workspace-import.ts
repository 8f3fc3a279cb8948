/**
 * Changing the running e2e server's workspace the way an operator would: importing part of its
 * workspace file with the command line, on the server's own data store. The workspace's own
 * settings (every key of the fixture that is not a list: password screening and reset, bot
 * protection, …) travel with every part, because a key a file leaves out takes its default.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "@playwright/test";
import { LATCHKEY_PORT } from "./env";

type Fixture = Record<string, unknown> & { id: string; name: string; applications: Array<Record<string, unknown> & { client_id: string }> };

export const fixture = JSON.parse(readFileSync(path.join(process.cwd(), "e2e/fixtures/e2e-workspace.json"), "utf8")) as Fixture;

/** The fixture's top-level settings: its id, name and every key that is not a list. */
export function fixtureSettings(): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fixture).filter(([, value]) => !Array.isArray(value)));
}

/** DATABASE_URL (+ MASTER_KEY) or DATA_DIR of the server under test, as e2e/serve.mjs publishes it. */
export function serverStore(): Record<string, string> {
  if (process.env.E2E_SERVER_DATABASE_URL) {
    return { DATABASE_URL: process.env.E2E_SERVER_DATABASE_URL, MASTER_KEY: process.env.MASTER_KEY ?? "" };
  }
  if (process.env.E2E_SERVER_DATA_DIR) return { DATA_DIR: process.env.E2E_SERVER_DATA_DIR };
  const file = path.join(process.cwd(), ".test-data", `e2e-server-${LATCHKEY_PORT}.json`);
  return (JSON.parse(readFileSync(file, "utf8")) as { env: Record<string, string> }).env;
}

/** Imports `part` (with the fixture's settings under it) into the running server's workspace. */
export async function importWorkspacePart(part: Record<string, unknown>): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  delete env.DATA_DIR;
  delete env.MASTER_KEY;
  for (const [name, value] of Object.entries(serverStore())) if (value) env[name] = value;
  const doc = { ...fixtureSettings(), ...part };
  const result = await new Promise<{ code: number; output: string }>((resolve) => {
    const child = execFile(path.join(process.cwd(), "node_modules/.bin/tsx"), ["cli/latchkey.ts", "workspace", "import", "-"], { env, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? 1 : 0, output: stdout + stderr }),
    );
    child.stdin!.end(JSON.stringify(doc));
  });
  expect(result.code, `latchkey workspace import failed:\n${result.output}`).toBe(0);
}
