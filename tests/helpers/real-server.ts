/**
 * The real server as `npm start` runs it (the compiled server, scripts/server-command.mjs), for the
 * tests that start it as a process: graceful shutdown, the cluster, the metrics listener. They
 * need the production build; without one they are skipped, except under CI, where a missing build
 * fails them.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { SERVER_ENTRY, serverNodeArgs } from "../../scripts/server-command.mjs";

export const root = path.resolve(import.meta.dirname, "..", "..");
/** The production build and the compiled server exist. */
export const built = existsSync(path.join(root, ".next", "BUILD_ID")) && existsSync(path.join(root, SERVER_ENTRY));
const ci = !!process.env.CI && process.env.CI !== "0" && process.env.CI !== "false";
/** Run the real server's tests: there is a build, or this is CI, where its absence is a failure. */
export const runRealServer = built || ci;

/** A port nothing listens on (on loopback) right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

export interface RealServer {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts the compiled server with `env` over this process's environment (no metrics listener unless `env` asks; the log as in production). */
export function startRealServer(env: Record<string, string>): RealServer {
  let output = "";
  const child = spawn(process.execPath, [...serverNodeArgs(), SERVER_ENTRY], {
    cwd: root,
    env: { ...process.env, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1", METRICS_PORT: "", METRICS_HOST: "", LOG_FORMAT: "", LOG_LEVEL: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Resolves once the server says it listens; throws with its output if it exits or takes two minutes. */
export async function listening(server: RealServer): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!server.output().includes("Latchkey is listening")) {
    if (server.child.exitCode !== null) throw new Error(`the server exited:\n${server.output()}`);
    if (Date.now() > deadline) throw new Error(`the server did not start:\n${server.output()}`);
    await sleep(200);
  }
}
