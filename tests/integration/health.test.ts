/**
 * `/healthz` and `/readyz` through the production listener (lib/server/node-server.ts), answered
 * before Next and outside the issuer paths: liveness is the process answering; readiness is the
 * database answering with every migration of this build applied, and turns 503 while the server
 * drains for shutdown.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openDatabase, runMigrations, type DatabaseHandle } from "../../db/client";
import { openFreshEmbeddedDatabase } from "../setup/test-database";
import { expectedMigrations, readinessProbe, type ReadinessProbe } from "../../lib/http/health";
import { createRequestListener } from "../../lib/server/node-server";
import { createService, type Service } from "../../lib/service";
import { createHarness, PUBLIC_URL, type Harness } from "../helpers/harness";

let h: Harness;
const reachedNext: string[] = [];
const servers: http.Server[] = [];

beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  for (const s of servers) await new Promise((resolve) => s.close(resolve));
});

/** The production listener over `service`, on loopback; returns a function that sends one request. */
async function listen(service: Service, readiness?: ReadinessProbe) {
  const next = (req: http.IncomingMessage, res: http.ServerResponse) => {
    reachedNext.push(`${req.method} ${req.url}`);
    res.writeHead(404).end();
  };
  const server = http.createServer(createRequestListener(service, PUBLIC_URL, next, { readiness }));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return async (path: string, method = "GET") => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method });
    return { status: res.status, headers: res.headers, body: await res.text() };
  };
}

describe("/healthz", () => {
  it("answers 200 with a tiny body, uncached, without credentials and without Next", async () => {
    const send = await listen(h.service);
    reachedNext.length = 0;
    const res = await send("/healthz");
    expect(res).toMatchObject({ status: 200, body: "ok\n" });
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect((await send("/healthz", "HEAD")).status).toBe(200);
    expect((await send("/healthz?probe=1")).status).toBe(200);
    const post = await send("/healthz", "POST");
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    expect(reachedNext).toEqual([]);
  });

  it("stays up while the database is down: liveness is the process, not its dependencies", async () => {
    const down = await openDatabase({ databaseUrl: "postgres://postgres@127.0.0.1:9/latchkey" });
    try {
      const send = await listen(createService(down.db, h.service.config, h.clock));
      expect((await send("/healthz")).status).toBe(200);
    } finally {
      await down.close();
    }
  });
});

describe("/readyz", () => {
  it("answers 200 when the database answers and carries every migration of this build", async () => {
    const send = await listen(h.service);
    reachedNext.length = 0;
    const res = await send("/readyz");
    expect(res).toMatchObject({ status: 200, body: "ready\n" });
    expect((await send("/readyz", "HEAD")).status).toBe(200);
    expect(reachedNext).toEqual([]);
  });

  it("answers 503 with Retry-After when the database cannot be reached (nothing listens on port 9)", async () => {
    const down = await openDatabase({ databaseUrl: "postgres://postgres@127.0.0.1:9/latchkey" });
    try {
      const send = await listen(createService(down.db, h.service.config, h.clock));
      const res = await send("/readyz");
      expect(res).toMatchObject({ status: 503, body: "database unreachable\n" });
      expect(res.headers.get("retry-after")).toBeTruthy();
    } finally {
      await down.close();
    }
  });

  it("answers 503 when the database does not answer within the bound", async () => {
    const hanging = { execute: () => new Promise(() => {}) } as unknown as Service["db"];
    const send = await listen(h.service, readinessProbe(hanging, { timeoutMs: 100, cacheMs: 0 }));
    const started = Date.now();
    expect((await send("/readyz")).status).toBe(503);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("answers 503 when this build expects a migration the database has not recorded", async () => {
    const newer = [...expectedMigrations(), Math.max(...expectedMigrations()) + 1];
    const send = await listen(h.service, readinessProbe(h.service.db, { expected: newer }));
    expect(await send("/readyz")).toMatchObject({ status: 503, body: "migrations pending\n" });
  });

  it("answers 503 on a database where one migration is missing, and on one never migrated", async () => {
    // A private embedded database, whatever this run uses: its migration record is edited below.
    const own: DatabaseHandle = await openDatabase({});
    try {
      const send = await listen(h.service, readinessProbe(own.db, { cacheMs: 0 }));
      expect(await send("/readyz")).toMatchObject({ status: 503, body: "migrations pending\n" });
      await runMigrations(own);
      expect((await send("/readyz")).status).toBe(200);
      await own.db.execute(sql`delete from drizzle.__drizzle_migrations where created_at = (select max(created_at) from drizzle.__drizzle_migrations)`);
      expect(await send("/readyz")).toMatchObject({ status: 503, body: "migrations pending\n" });
    } finally {
      await own.close();
    }
  });

  it("answers 503 on a database that cannot take writes (default_transaction_read_only), and 200 once it can", async () => {
    const own: DatabaseHandle = await openFreshEmbeddedDatabase();
    try {
      const send = await listen(h.service, readinessProbe(own.db, { cacheMs: 0 }));
      expect((await send("/readyz")).status).toBe(200);
      await own.db.execute(sql`set default_transaction_read_only = on`);
      const res = await send("/readyz");
      expect(res).toMatchObject({ status: 503, body: "database read-only\n" });
      expect(res.headers.get("retry-after")).toBeTruthy();
      await own.db.execute(sql`set default_transaction_read_only = off`);
      expect((await send("/readyz")).status).toBe(200);
    } finally {
      await own.close();
    }
  });

  it.runIf(Boolean(inject("databaseUrl")))("answers 503 on a PostgreSQL session that is read-only, as a standby after failover is", async () => {
    const url = new URL(inject("databaseUrl")!);
    url.searchParams.set("default_transaction_read_only", "on");
    const readOnly = await openDatabase({ databaseUrl: url.toString(), poolSize: 1 });
    try {
      const send = await listen(createService(readOnly.db, h.service.config, h.clock));
      expect(await send("/readyz")).toMatchObject({ status: 503, body: "database read-only\n" });
    } finally {
      await readOnly.close();
    }
  });

  it("answers 503 once the server drains for shutdown", async () => {
    const probe = readinessProbe(h.service.db);
    const send = await listen(h.service, probe);
    expect((await send("/readyz")).status).toBe(200);
    probe.drain();
    expect(await send("/readyz")).toMatchObject({ status: 503, body: "shutting down\n" });
  });

  it("costs one query however many probes arrive at once", async () => {
    let queries = 0;
    const counting = new Proxy(h.service.db, {
      get(target, name, receiver) {
        if (name === "execute") {
          return (...args: unknown[]) => {
            queries++;
            return (target.execute as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return Reflect.get(target, name, receiver);
      },
    });
    const send = await listen(h.service, readinessProbe(counting, { cacheMs: 5000 }));
    const answers = await Promise.all(Array.from({ length: 25 }, () => send("/readyz")));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(queries).toBe(1);
  });
});
