/**
 * The latchkey CLI on the e2e server's data store, as e2e/serve.mjs publishes it
 * (.test-data/e2e-server-<port>.json). With the embedded database the server runs the command:
 * this speaks to its admin socket directly (lib/cli/admin-socket.ts, the CLI's own client),
 * which spares the CLI's start-up; with PostgreSQL the CLI runs and connects itself.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseMasterKey } from "../lib/config";
import { LATCHKEY_PORT } from "./env";

/** The parts of an exported workspace file the federation spec reads or changes. */
export interface ExportedWorkspace {
  id: string;
  users: { email: string; roles?: (string | { role: string; organization: string })[] }[];
  organizations: { slug: string; members: string[]; connections: { name: string; enabled: boolean }[] }[];
  [field: string]: unknown;
}

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

function serverStore(): Record<string, string | undefined> {
  const file = path.join(process.cwd(), ".test-data", `e2e-server-${LATCHKEY_PORT}.json`);
  return (JSON.parse(readFileSync(file, "utf8")) as { env: Record<string, string | undefined> }).env;
}

/** The e2e server's master key: MASTER_KEY, or with the embedded database the key file it generated in its data directory. */
export function serverMasterKey(): Buffer {
  const store = serverStore();
  return parseMasterKey(store.MASTER_KEY || readFileSync(path.join(store.DATA_DIR!, "master.key"), "utf8"));
}

async function latchkey(argv: string[], stdin = ""): Promise<Outcome> {
  const store = serverStore();
  const { adminSocketPath, sendAdminCommand } = await import("../lib/cli/admin-socket");
  if (store.DATA_DIR && existsSync(adminSocketPath(store.DATA_DIR))) {
    const outcome: Outcome = { code: 1, stdout: "", stderr: "" };
    outcome.code = await sendAdminCommand(adminSocketPath(store.DATA_DIR), { argv, stdin }, { out: (text) => (outcome.stdout += text), err: (text) => (outcome.stderr += text) });
    return outcome;
  }
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  delete env.DATA_DIR;
  delete env.MASTER_KEY;
  for (const [name, value] of Object.entries(store)) if (value) env[name] = value;
  return new Promise((resolve) => {
    const child = execFile(
      path.join(process.cwd(), "node_modules/.bin/tsx"),
      ["cli/latchkey.ts", ...argv],
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
