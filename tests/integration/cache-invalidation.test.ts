/**
 * Several processes on one PostgreSQL database (lib/service.ts, "Caches and changes"): a change
 * committed by one is not answered from another's cache once its announcement arrives. Two
 * services over two connection pools of a database of their own, each listening for changes as a
 * server process does (`followChanges`); the changes are made the ways an installation makes them
 * (console operations, the workspace import). tests/dispatch/instances.test.ts does the same with
 * two real server processes behind a proxy.
 */
import net from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { and, eq } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openDatabase, runMigrations, type DatabaseHandle } from "../../db/client";
import { listen } from "../../db/listener";
import { apis, signingKeys, workspaceHostnames, workspaces } from "../../db/schema";
import { ensureSystemWorkspace } from "../../lib/console/system";
import { matchHost } from "../../lib/hostnames/directory";
import { getActiveSigningKey } from "../../lib/oauth/keys";
import { resolveWorkspace } from "../../lib/server/router";
import { cacheGeneration, cacheIfCurrent, createService, followChanges, forgetWorkspace, type Service } from "../../lib/service";
import { importWorkspace } from "../../lib/workspaces/file";
import { authorizeQuery, call, createHarness, Jar, PUBLIC_URL, TestClock, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { SPA, standardWorkspace } from "../helpers/fixtures";
import { pageServer } from "../helpers/sign-in-pages";
import { becomes } from "../helpers/poll";
import { setBranding } from "../../lib/console/branding";
import { runOperation } from "../../lib/console/operation";
import { createDatabase, dropDatabase, freshDatabaseName } from "../setup/database";
import { consoleSignIn, createOperator, runRegistered } from "./console-helpers";

const runUrl = inject("databaseUrl");
const warned: string[] = [];
const quiet = { log: () => {}, warn: (line: string) => warned.push(line) };

describe("the cache generation", () => {
  it("keeps a value read before a change out of the cache", async () => {
    const h = await createHarness();
    const before = cacheGeneration(h.service);
    forgetWorkspace(h.service, "some-workspace");
    cacheIfCurrent(h.service, before, "workspace:some-workspace", "stale");
    expect(h.service.cache.has("workspace:some-workspace")).toBe(false);
    cacheIfCurrent(h.service, cacheGeneration(h.service), "workspace:some-workspace", "fresh");
    expect(h.service.cache.get("workspace:some-workspace")).toBe("fresh");
  });
});

/** PostgreSQL's answer while it starts, shuts down or recovers: FATAL 57P03, then the connection closes. */
function startingUp(): Buffer {
  const fields = Buffer.from("SFATAL\0C57P03\0Mthe database system is starting up\0\0");
  const head = Buffer.alloc(5);
  head.write("E", 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

describe("the listening connection", () => {
  it("tries again after longer and longer pauses while the database is unavailable, and says so once", async () => {
    let attempts = 0;
    const unavailable = net.createServer((socket) => {
      attempts++;
      socket.on("error", () => {});
      socket.once("data", () => socket.end(startingUp()));
    });
    await new Promise<void>((resolve) => unavailable.listen(0, "127.0.0.1", resolve));
    const { port } = unavailable.address() as net.AddressInfo;
    const lost: unknown[] = [];
    const listener = listen(`postgres://nobody@127.0.0.1:${port}/none`, "latchkey_changes", { message: () => {}, listening: () => {}, lost: (e) => lost.push(e) });
    await sleep(1_500);
    await listener.close();
    unavailable.close();
    // After 0, 100, 200, 400 and 800 ms: five attempts in 1.5 s, not one after another.
    expect(attempts).toBeGreaterThanOrEqual(3);
    expect(attempts).toBeLessThan(10);
    expect(lost).toHaveLength(1);
    expect(String(lost[0])).toContain("starting up");
    expect(listener.active).toBe(false);
  });
});

describe.runIf(Boolean(runUrl))("two processes on one PostgreSQL database", () => {
  const name = freshDatabaseName("latchkey_instances");
  let databaseUrl: string;
  const handles: DatabaseHandle[] = [];
  const listeners: { close(): Promise<void>; readonly active: boolean }[] = [];
  let a: Harness;
  let b: Service;
  let owner: string;
  const ws = uniqueWorkspaceId("instances");

  beforeAll(async () => {
    databaseUrl = await createDatabase(runUrl!, name);
    const clock = new TestClock();
    const first = await openDatabase({ databaseUrl, poolSize: 4 });
    const second = await openDatabase({ databaseUrl, poolSize: 4 });
    handles.push(first, second);
    await runMigrations(first, databaseUrl);
    const base = await createHarness();
    a = { service: createService(first.db, base.service.config, clock), clock, handle: first };
    b = createService(second.db, base.service.config, clock);
    for (const service of [a.service, b]) listeners.push(followChanges(service, databaseUrl, quiet));
    expect(await becomes(async () => listeners.every((l) => l.active), 10_000)).toBe(true);
    await importWorkspace(a.service.db, standardWorkspace(ws), { clock, masterKey: a.service.config.masterKey });
    await ensureSystemWorkspace(a.service);
    await createOperator(a, "owner@instances.test", { [ws]: "owner" });
    owner = (await consoleSignIn(a, "owner@instances.test")).token;
  }, 60_000);

  afterAll(async () => {
    for (const listener of listeners) await listener.close();
    for (const handle of handles) await handle.close();
    if (runUrl) await dropDatabase(runUrl, name);
    // Listening where the changes are made, both heard their probes (each time they listened): nothing was said about them.
    expect(warned.filter((line) => line.includes("DATABASE_LISTEN_URL"))).toEqual([]);
  });

  it("a signing key activated by one: the other signs with it at once (its cache would keep the old one 30 s)", async () => {
    const before = await getActiveSigningKey(b, ws);
    expect(await runRegistered(a, owner, ws, "publishKey", {})).toMatchObject({ ok: true });
    a.clock.advance(301_000);
    const activated = await runRegistered(a, owner, ws, "activateKey", {});
    expect(activated).toMatchObject({ ok: true });
    const [active] = await a.service.db.select().from(signingKeys).where(and(eq(signingKeys.workspaceId, ws), eq(signingKeys.status, "active")));
    expect(active.kid).not.toBe(before.kid);
    expect(await becomes(async () => (await getActiveSigningKey(b, ws)).kid === active.kid)).toBe(true);
  });

  it("the public documents built by one follow the other's changes at once (its built bytes would be kept 30 s): a client's scopes, an API grant, an API deactivated, a key published", async () => {
    const discovery = async (query: string) => {
      const res = await call({ ...a, service: b }, `/t/${ws}/.well-known/openid-configuration${query}`);
      return res.status === 200 ? ((await res.json()) as { scopes_supported: string[] }).scopes_supported : res.status;
    };
    const kids = async () => ((await (await call({ ...a, service: b }, `/t/${ws}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid).sort();
    const same = (x: unknown, y: unknown) => JSON.stringify(x) === JSON.stringify(y);
    const spa = { client_id: "spa", name: "Single-page app", redirect_uris: "https://app.example.test/callback", allowed_origins: "https://app.example.test" };
    expect(await discovery("?client_id=spa")).toEqual(["email", "openid", "profile", "read:things", "write:things"]);
    expect(await runRegistered(a, owner, ws, "updateApplication", { ...spa, identity_scopes: ["openid"] })).toMatchObject({ ok: true });
    expect(await becomes(async () => same(await discovery("?client_id=spa"), ["openid", "read:things", "write:things"]))).toBe(true);
    expect(await discovery("?client_id=minimal")).toEqual(["openid"]);
    expect(await runRegistered(a, owner, ws, "setClientApiGrant", { client_id: "minimal", audience: "https://api.example.test", granted: "on", permissions: ["read:things"] })).toMatchObject({ ok: true });
    expect(await becomes(async () => same(await discovery("?client_id=minimal"), ["openid", "read:things"]))).toBe(true);
    const [api] = await a.service.db.select().from(apis).where(and(eq(apis.workspaceId, ws), eq(apis.audience, "https://api.example.test")));
    expect(await runRegistered(a, owner, ws, "setApiActive", { api_id: api.id, active: "false", confirm: api.audience })).toMatchObject({ ok: true });
    expect(await becomes(async () => same(await discovery("?client_id=spa"), ["openid"]) && same(await discovery("?client_id=minimal"), ["openid"]))).toBe(true);
    expect(await runRegistered(a, owner, ws, "setApiActive", { api_id: api.id, active: "true" })).toMatchObject({ ok: true });
    expect(await becomes(async () => same(await discovery("?client_id=minimal"), ["openid", "read:things"]))).toBe(true);
    expect(await runRegistered(a, owner, ws, "setApplicationActive", { client_id: "minimal", active: "false" })).toMatchObject({ ok: true });
    expect(await becomes(async () => (await discovery("?client_id=minimal")) === 404)).toBe(true);
    const before = await kids();
    const published = await runRegistered(a, owner, ws, "publishKey", {});
    expect(published).toMatchObject({ ok: true });
    const next = (published as { result: { kid: string } }).result.kid;
    expect(await becomes(async () => same(await kids(), [...before, next].sort()))).toBe(true);
  });

  it("the sign-in page kept by one is rendered again at once after a branding change made by the other (its kept render would be answered 30 s)", async () => {
    const pages = await pageServer(b);
    try {
      const begin = async () => {
        const started = await call(a, `/t/${ws}/oauth2/authorize?${authorizeQuery({ ...SPA, scope: "openid" }).query}`);
        const location = new URL(started.headers.get("location")!, PUBLIC_URL);
        return { path: `${location.pathname}${location.search}`, cookie: new Jar().take(started).header() };
      };
      const get = async () => {
        const s = await begin();
        expect((await pages.get(s.path, { cookie: s.cookie })).status).toBe(200);
      };
      await get();
      const rendered = pages.renders.length;
      await get();
      expect(pages.renders.length).toBe(rendered);
      expect(await runOperation(a.service, owner, ws, setBranding, { display_name: "Renamed", primary_color: "#0055aa", theme: "dark" })).toMatchObject({ ok: true });
      expect(
        await becomes(async () => {
          const before = pages.renders.length;
          await get();
          return pages.renders.length === before + 1;
        }),
      ).toBe(true);
    } finally {
      await pages.close();
    }
  });

  it("a hostname added by an import and removed in the console: the other serves it, then refuses it, at once (its directory would keep it 5 s)", async () => {
    const hostname = `login.${ws}.test`;
    const headers = new Headers({ host: hostname });
    expect(await matchHost(b, headers)).toEqual({ kind: "unknown" });
    await importWorkspace(a.service.db, { ...standardWorkspace(ws), hostnames: [{ hostname, verified: true }] }, { clock: a.clock, masterKey: a.service.config.masterKey });
    expect(await becomes(async () => (await matchHost(b, headers)).kind === "hostname")).toBe(true);
    const [row] = await a.service.db.select().from(workspaceHostnames).where(eq(workspaceHostnames.hostname, hostname));
    expect(await runRegistered(a, owner, ws, "removeHostname", { hostname_id: row.id, confirm: hostname })).toMatchObject({ ok: true });
    expect(await becomes(async () => (await matchHost(b, headers)).kind === "unknown")).toBe(true);
  });

  it("after losing its listening connection, a process listens again and drops what it cached (messages meanwhile were lost)", async () => {
    expect((await resolveWorkspace(b, ws))?.name).toBe(`Workspace ${ws}`);
    // A change whose message B misses: written without an announcement.
    await a.service.db.update(workspaces).set({ name: "Renamed meanwhile" }).where(eq(workspaces.id, ws));
    const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const ended = await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name} and query = 'listen "latchkey_changes"' and pid <> pg_backend_pid()`;
      expect(ended).toHaveLength(2);
    } finally {
      await admin.end();
    }
    expect(await becomes(async () => listeners.every((l) => l.active), 5_000)).toBe(true);
    expect(await becomes(async () => (await resolveWorkspace(b, ws))?.name === "Renamed meanwhile")).toBe(true);
  });

  it("says so in the log when announcements do not arrive on the listening connection (as through a transaction-pooling proxy)", async () => {
    // Listening on another database than the one the service writes to: its probe never arrives.
    const elsewhere = await createDatabase(runUrl!, `${name}_elsewhere`);
    const warnings: string[] = [];
    const deaf = followChanges(b, elsewhere, { log: () => {}, warn: (line: string) => warnings.push(line) });
    try {
      expect(await becomes(async () => deaf.active, 5_000)).toBe(true);
      expect(await becomes(async () => warnings.length > 0, 8_000)).toBe(true);
      expect(warnings).toEqual([expect.stringContaining("DATABASE_LISTEN_URL")]);
    } finally {
      await deaf.close();
      await dropDatabase(runUrl!, `${name}_elsewhere`);
    }
  }, 20_000);

  it("a workspace deleted by one: the other answers 404 at once (its cache would answer for 5 s)", async () => {
    const discovery = () => call({ ...a, service: b }, `/t/${ws}/.well-known/openid-configuration`);
    expect((await discovery()).status).toBe(200);
    expect(await resolveWorkspace(b, ws)).not.toBeNull();
    expect(await runRegistered(a, owner, ws, "deleteWorkspace", { confirm: ws })).toMatchObject({ ok: true });
    expect(await becomes(async () => (await discovery()).status === 404)).toBe(true);
    expect(await resolveWorkspace(b, ws)).toBeNull();
  });
});
