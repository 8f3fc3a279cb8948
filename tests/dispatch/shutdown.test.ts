/**
 * Graceful shutdown of the real server (server.ts on the production build): on SIGTERM a request
 * in flight completes, an idle keep-alive connection is closed, new connections are refused and
 * the process exits 0; with WEB_CONCURRENCY (PostgreSQL) the same through the workers. Needs the
 * production build like the equivalence test (under CI=1 a missing build fails instead of skipping).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import { createDatabase, dropDatabase, freshDatabaseName } from "../setup/database";
import { built, freePort, listening, runRealServer, startRealServer as start, type RealServer as Started } from "../helpers/real-server";

const databaseUrl = inject("databaseUrl");

/** A raw connection that records what the server sends and when it closes. */
function connect(port: number): Promise<{ socket: net.Socket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: "127.0.0.1" });
    let data = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk) => (data += chunk));
    const closed = new Promise<void>((done) => socket.on("close", () => done()));
    socket.once("connect", () => {
      socket.on("error", () => {});
      resolve({ socket, received: () => data, closed });
    });
    socket.once("error", reject);
  });
}

async function refused(port: number): Promise<boolean> {
  try {
    const { socket } = await connect(port);
    socket.destroy();
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ECONNREFUSED";
  }
}

const BODY = "grant_type=client_credentials&client_id=nobody&client_secret=nothing-at-all";

/**
 * Starts a token request whose body arrives in two parts (so it is in flight when the signal
 * comes), and holds an idle keep-alive connection; sends SIGTERM; checks the drain.
 */
async function drainOnSigterm(server: Started, port: number): Promise<void> {
  const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
  expect(ready.status).toBe(200);

  const idle = await connect(port);
  idle.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  const slow = await connect(port);
  slow.socket.write(
    `POST /t/system/oauth2/token HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY.slice(0, 20)}`,
  );
  await sleep(300);
  expect(idle.received()).toMatch(/^HTTP\/1\.1 200 /);

  const signalled = Date.now();
  server.child.kill("SIGTERM");
  // The idle connection is closed and the port stops accepting, while the request stays open.
  await idle.closed;
  const deadline = Date.now() + 5000;
  while (!(await refused(port))) {
    if (Date.now() > deadline) throw new Error("new connections are still accepted");
    await sleep(50);
  }
  expect(slow.received()).toBe("");

  slow.socket.write(BODY.slice(20));
  await slow.closed;
  const answer = slow.received();
  // The endpoint's own answer to this (refused) client: the request ran to its end.
  expect(answer).toMatch(/^HTTP\/1\.1 4\d\d /);
  expect(answer).toMatch(/\r\nconnection: close\r\n/i);
  expect(answer).toMatch(/\r\n\r\n\{"error":"[a-z_]+"/);

  expect(await server.exited).toBe(0);
  expect(Date.now() - signalled).toBeLessThan(8000);
  expect(server.output()).not.toContain("cut off");
}

describe.runIf(runRealServer)("graceful shutdown of the real server", () => {
  let server: Started | undefined;
  let dataDir: string | undefined;
  // A PostgreSQL database of its own: the server seeds and repoints the demo workspace at
  // start-up, which must not reach the workspaces other test files keep in the run's database.
  const ownName = freshDatabaseName("latchkey_shutdown");
  let ownDatabase: string | undefined;
  // One key for both tests: the second finds the signing keys the first stored.
  const MASTER_KEY = randomBytes(32).toString("hex");
  const database = async () => (ownDatabase ??= await createDatabase(databaseUrl!, ownName));
  afterAll(async () => {
    if (ownDatabase) await dropDatabase(databaseUrl!, ownName);
  });
  afterEach(() => {
    if (server && server.child.exitCode === null) {
      for (const pid of spawnSync("pgrep", ["-P", String(server.child.pid)], { encoding: "utf8" }).stdout.split("\n").filter(Boolean)) process.kill(Number(pid), "SIGKILL");
      server.child.kill("SIGKILL");
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    server = dataDir = undefined;
  });

  it("one process: SIGTERM lets the request in flight finish, closes idle connections, refuses new ones, exits 0", async () => {
    expect(built, "the production build (.next) is missing: run npm run build").toBe(true);
    const port = await freePort();
    const env: Record<string, string> = { PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, SHUTDOWN_TIMEOUT: "20", WEB_CONCURRENCY: "1" };
    if (databaseUrl) Object.assign(env, { DATABASE_URL: await database(), MASTER_KEY });
    else Object.assign(env, { DATABASE_URL: "", DATA_DIR: (dataDir = mkdtempSync(path.join(tmpdir(), "latchkey-shutdown-"))) });
    server = start(env);
    await listening(server);
    await drainOnSigterm(server, port);
  }, 180_000);

  it.runIf(Boolean(databaseUrl))("WEB_CONCURRENCY=2: every worker drains the same way and the first process exits 0", async () => {
    const port = await freePort();
    server = start({ PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, SHUTDOWN_TIMEOUT: "20", WEB_CONCURRENCY: "2", DATABASE_URL: await database(), MASTER_KEY });
    await listening(server);
    await drainOnSigterm(server, port);
  }, 180_000);
});

if (!runRealServer) {
  describe("graceful shutdown of the real server", () => {
    it.skip("needs the production build: run `npm run build` (npm test builds first)", () => {});
  });
}
