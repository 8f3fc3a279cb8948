/**
 * Starts tests/dispatch/dual-server.ts (the production listener and a Next-only one over the build)
 * in a process of its own, on the run's PostgreSQL database or a fresh embedded data directory,
 * and waits for its ready line. `env` is added to the process's environment; a value of
 * `undefined` removes that variable.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..", "..");

export interface DualServer {
  /** The production server's listener, and the one that hands every request to Next. */
  ports: { direct: number; next: number };
  /** What the server has written to stderr so far (its log). */
  stderr(): string;
  stop(): Promise<void>;
}

export async function startDualServer(env: Record<string, string | undefined>): Promise<DualServer> {
  const full: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1" };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete full[name];
    else full[name] = value;
  }
  let dataDir: string | undefined;
  if (process.env.DATABASE_URL) {
    full.MASTER_KEY ||= randomBytes(32).toString("hex");
  } else {
    dataDir = mkdtempSync(path.join(tmpdir(), "latchkey-dispatch-"));
    full.DATA_DIR = dataDir;
    delete full.MASTER_KEY;
  }
  const child = spawn(process.execPath, ["--import", "tsx", "tests/dispatch/dual-server.ts"], { cwd: root, env: full, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (c) => (stderr += c));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const ports = await new Promise<{ direct: number; next: number }>((resolve, reject) => {
      let stdout = "";
      const timer = setTimeout(() => reject(new Error(`dual server did not start in time\n${stderr}`)), 90_000);
      child.stdout!.on("data", (c) => {
        stdout += c;
        const line = stdout.split("\n").find((l) => l.startsWith('{"ready"'));
        if (line) {
          clearTimeout(timer);
          resolve(JSON.parse(line).ready);
        }
      });
      child.on("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`dual server exited (${code})\n${stderr}`));
      });
    });
    return { ports, stderr: () => stderr, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
