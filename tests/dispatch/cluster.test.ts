/**
 * WEB_CONCURRENCY: the production server as N worker processes sharing the port (node:cluster).
 * Starts the real server (server.ts) against this run's PostgreSQL database; needs the production
 * build like the equivalence test (under CI=1 a missing build fails instead of skipping).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createDatabase, dropDatabase, freshDatabaseName } from "../setup/database";
import { built, freePort, root, runRealServer, startRealServer as start } from "../helpers/real-server";

const databaseUrl = inject("databaseUrl");

const workerPids = (pid: number) =>
  spawnSync("pgrep", ["-P", String(pid)], { encoding: "utf8" })
    .stdout.split("\n")
    .filter(Boolean)
    .map(Number);

async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

describe("WEB_CONCURRENCY", () => {
  it("refuses more than one process on the embedded database, in one line naming the variable", async () => {
    const server = start({ WEB_CONCURRENCY: "2", DATABASE_URL: "", DATA_DIR: path.join(root, ".test-data", `cluster-${randomBytes(4).toString("hex")}`) });
    expect(await server.exited).toBe(1);
    expect(server.output()).toMatch(/^latchkey: WEB_CONCURRENCY above 1 needs DATABASE_URL/m);
  });

  describe.skipIf(!databaseUrl || !runRealServer)("with PostgreSQL", () => {
    let server: ReturnType<typeof start> | undefined;
    // A database of its own: the server seeds and repoints the demo workspace at start-up, which
    // must not reach the workspaces other test files keep in this run's shared database.
    const ownName = freshDatabaseName("latchkey_cluster");
    afterAll(async () => {
      if (server && server.child.exitCode === null) {
        server.child.kill("SIGKILL");
        for (const pid of workerPids(server.child.pid!)) process.kill(pid, "SIGKILL");
      }
      await dropDatabase(databaseUrl!, ownName);
    });

    it("forks the workers, serves from them, replaces one that dies, and stops them all on SIGTERM", async () => {
      expect(built, "the production build (.next) is missing: run npm run build").toBe(true);
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const ownDatabase = await createDatabase(databaseUrl!, ownName);
      server = start({ WEB_CONCURRENCY: "2", DATABASE_URL: ownDatabase, MASTER_KEY: randomBytes(32).toString("hex"), PORT: String(port), PUBLIC_URL: base });
      const primary = server.child.pid!;
      await until("the server to listen", () => server!.output().includes("Latchkey is listening") || (server!.child.exitCode !== null && Promise.reject(new Error(server!.output()))), 90_000);
      expect(server.output()).toContain("2 workers");

      const first = workerPids(primary);
      expect(first).toHaveLength(2);
      // The console's workspace exists on every database.
      for (let i = 0; i < 6; i++) {
        const res = await fetch(`${base}/t/system/.well-known/openid-configuration`);
        expect(res.status).toBe(200);
        expect((await res.json()).issuer).toBe(`${base}/t/system`);
      }

      // A worker that dies is replaced; the port keeps answering meanwhile.
      process.kill(first[0], "SIGKILL");
      const replaced = await until("a replacement worker", () => {
        const now = workerPids(primary);
        return now.length === 2 && !now.includes(first[0]) ? now : undefined;
      });
      expect(replaced).toContain(first[1]);
      await until("the replacement to serve", async () => (await fetch(`${base}/t/system/.well-known/jwks.json`)).status === 200);

      server.child.kill("SIGTERM");
      expect(await server.exited).toBe(0);
      expect(replaced.filter((pid) => spawnSync("kill", ["-0", String(pid)]).status === 0)).toEqual([]);
    }, 180_000);
  });
});
