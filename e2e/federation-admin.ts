/**
 * The latchkey CLI on the e2e server's data store, as e2e/serve.mjs publishes it
 * (.test-data/e2e-server-<port>.json): with the embedded database the server runs the command
 * (its admin socket), with PostgreSQL the CLI connects itself.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { LATCHKEY_PORT } from "./env";

/** The parts of an exported workspace file the federation spec reads or changes. */
export interface ExportedWorkspace {
  id: string;
  users: { email: string; roles?: (string | { role: string; organization: string })[] }[];
  organizations: { slug: string; members: string[]; connections: { name: string; enabled: boolean }[] }[];
  [field: string]: unknown;
}

function latchkey(args: string[], stdin = ""): Promise<{ code: number; stdout: string; stderr: string }> {
  const published = JSON.parse(readFileSync(path.join(process.cwd(), ".test-data", `e2e-server-${LATCHKEY_PORT}.json`), "utf8")) as { env: Record<string, string | undefined> };
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  delete env.DATA_DIR;
  delete env.MASTER_KEY;
  for (const [name, value] of Object.entries(published.env)) if (value) env[name] = value;
  return new Promise((resolve) => {
    const child = execFile(
      path.join(process.cwd(), "node_modules/.bin/tsx"),
      ["cli/latchkey.ts", ...args],
      { env, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(stdin);
  });
}

export async function exportWorkspace(id: string): Promise<ExportedWorkspace> {
  const result = await latchkey(["workspace", "export", id]);
  if (result.code !== 0) throw new Error(`latchkey workspace export ${id} failed:\n${result.stderr}`);
  return JSON.parse(result.stdout) as ExportedWorkspace;
}

/** Imports a workspace file (an export changed in place: importing it unchanged changes nothing). */
export async function importWorkspace(doc: ExportedWorkspace): Promise<void> {
  const result = await latchkey(["workspace", "import", "-"], JSON.stringify(doc));
  if (result.code !== 0) throw new Error(`latchkey workspace import failed:\n${result.stdout}\n${result.stderr}`);
}
