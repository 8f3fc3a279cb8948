import { randomBytes } from "node:crypto";
import net from "node:net";
import { sql as text } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { openDatabase, runMigrations, type DatabaseHandle } from "../../db/client";
import { listen } from "../../db/listener";
import { readinessProbe } from "../../lib/http/health";
import { failureResponse } from "../../lib/http/errors";
import { oauthFailures } from "../../lib/oauth/errors";
import { createDatabase, dropDatabase, freshDatabaseName } from "../setup/database";
import { createService } from "../../lib/service";
import { authorizeQuery, basic, call, createHarness, exchangeCode, Jar, PUBLIC_URL, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, M2M, SPA, WEB, standardWorkspace } from "../helpers/fixtures";
import { contextFor, resolveWorkspace } from "../../lib/server/router";
import { signInView } from "../../lib/sign-in/view";

const ws = uniqueWorkspaceId("down");
const defaultWs = ws;

async function expectUnavailable(res: Response) {
  expect(res.status).toBe(503);
  expect(res.headers.get("retry-after")).toBeTruthy();
  const text = await res.text();
  expect(text).not.toContain('"active":true');
  expect(text).not.toContain("invalid_grant");
  expect(text).not.toContain("invalid_client");
}

function requests(h: Harness, tokens: { access_token: string; refresh_token: string }, ws = defaultWs) {
  const bearer = { authorization: `Bearer ${tokens.access_token}` };
  return {
    session: () => call(h, `/t/${ws}/oidc/session`, { headers: bearer }),
    userinfo: () => call(h, `/t/${ws}/oidc/userinfo`, { headers: bearer }),
    refresh: () => call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: SPA.client_id } }),
    clientCredentials: () =>
      call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "client_credentials", resource: "https://api.example.test", scope: "read:things" }, headers: { authorization: basic(M2M.client_id, M2M.secret) } }),
    introspect: () => call(h, `/t/${ws}/oauth2/introspect`, { form: { token: tokens.access_token }, headers: { authorization: basic(M2M.client_id, M2M.secret) } }),
  };
}

describe("a database that cannot be reached", () => {
  let down: DatabaseHandle;
  let h: Harness;
  beforeAll(async () => {
    // Nothing listens on port 9: every query fails to connect.
    down = await openDatabase({ databaseUrl: "postgres://postgres@127.0.0.1:9/latchkey" });
    const base = await createHarness();
    h = { ...base, service: createService(down.db, base.service.config, base.clock) };
  });
  afterAll(async () => down.close());

  it("makes the token, session-check, UserInfo and introspection endpoints answer 503 with Retry-After", async () => {
    const r = requests(h, { access_token: "lka_whatever", refresh_token: "lkr_whatever" });
    for (const send of [r.session, r.userinfo, r.refresh, r.clientCredentials, r.introspect]) await expectUnavailable(await send());
  });

  it("answers each route's failure in its own shape: hosted pages for browsers, a problem document for the permission check", async () => {
    for (const path of [`/t/${ws}/oauth2/authorize?client_id=spa`, `/t/${ws}/oidc/logout?client_id=spa&post_logout_redirect_uri=x`]) {
      const page = await call(h, path);
      expect(page.status).toBe(503);
      expect(page.headers.get("content-type")).toContain("text/html");
      expect(page.headers.get("retry-after")).toBeTruthy();
    }
    const check = await call(h, `/t/${ws}/authorization/check`, {
      body: JSON.stringify({ resource: "https://api.example.test", permission: "read:things", organization_id: null }),
      headers: { "content-type": "application/json", authorization: "Bearer lka_whatever" },
    });
    expect(check.status).toBe(503);
    expect(check.headers.get("content-type")).toContain("application/problem+json");
    expect((await check.json()).allowed).toBeUndefined();
  });
});

describe.runIf(Boolean(inject("databaseUrl")))("the database going away mid-run and coming back", () => {
  let h: Harness;
  let viaProxy: Harness;
  let proxyHandle: DatabaseHandle;
  let proxy: net.Server;
  const sockets = new Set<net.Socket>();
  let port = 0;
  const target = new URL(inject("databaseUrl") ?? "postgres://unused@127.0.0.1:5432/unused");

  function startProxy(): Promise<void> {
    proxy = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const end = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on("error", end).on("close", end);
      upstream.on("error", end).on("close", end);
    });
    return new Promise((resolve) => proxy.listen(port, "127.0.0.1", () => {
      port = (proxy.address() as net.AddressInfo).port;
      resolve();
    }));
  }
  function stopProxy(): Promise<void> {
    for (const s of sockets) s.destroy();
    sockets.clear();
    return new Promise((resolve) => proxy.close(() => resolve()));
  }

  beforeAll(async () => {
    h = await createHarness();
    await seed(h, standardWorkspace(ws));
    await startProxy();
    const url = new URL(target);
    url.host = `127.0.0.1:${port}`;
    proxyHandle = await openDatabase({ databaseUrl: url.toString(), poolSize: 2 });
    viaProxy = { ...h, service: createService(proxyHandle.db, h.service.config, h.clock) };
  });
  afterAll(async () => {
    await stopProxy().catch(() => {});
    await proxyHandle.close();
  });

  it("denies with 503 while it is gone, revokes nothing, and recovers without a restart", async () => {
    const r0 = await signIn(viaProxy, ws, { ...SPA, ...ADA });
    const tokens = await (await exchangeCode(viaProxy, ws, { code: r0.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: r0.verifier, client_id: SPA.client_id })).json();
    const r = requests(viaProxy, tokens);
    expect((await r.session()).status).toBe(200);

    await stopProxy();
    for (const send of [r.session, r.userinfo, r.refresh, r.introspect]) await expectUnavailable(await send());

    await startProxy();
    // The same connection settings reconnect on their own.
    let recovered = await r.session();
    for (let i = 0; i < 5 && recovered.status !== 200; i++) recovered = await r.session();
    expect(recovered.status).toBe(200);
    expect((await recovered.json()).active).toBe(true);
    // The refresh attempted during the outage consumed nothing: the same token still rotates.
    const refreshed = await r.refresh();
    expect(refreshed.status).toBe(200);
  });
});

/**
 * The classes of database failure that mean "authority cannot be confirmed", each raised the way
 * the driver raises it (a database error with its SQLSTATE, wrapped by drizzle): every error
 * family answers 503 with Retry-After, never a 500 and never a denial that looks final.
 */
const UNCONFIRMED = [
  ["55000", 'database "latchkey" is not currently accepting connections'],
  ["3D000", 'database "latchkey" does not exist'],
  ["25006", "cannot execute INSERT in a read-only transaction"],
  ["57P01", "terminating connection due to administrator command"],
  ["57P03", "the database system is starting up"],
  ["08006", "connection failure"],
  ["53300", "sorry, too many clients already"],
  ["28P01", 'password authentication failed for user "latchkey"'],
  ["40001", "could not serialize access due to concurrent update"],
  ["40P01", "deadlock detected"],
] as const;

/** A database handle on which every statement fails with `code`, as drizzle reports a driver error. */
function failingDatabase(code: string, message: string): DatabaseHandle["db"] {
  const failure = () => new Error(`Failed query: select 1\nparams: `, { cause: Object.assign(new Error(message), { name: "PostgresError", code, severity: "FATAL" }) });
  return new Proxy({} as DatabaseHandle["db"], {
    get() {
      throw failure();
    },
  });
}

describe("every failure class that leaves authority unconfirmed", () => {
  let base: Harness;
  beforeAll(async () => {
    base = await createHarness();
  });

  it.each(UNCONFIRMED)("SQLSTATE %s (%s) is 503 in the OAuth, hosted-page, problem-document and handoff shapes", async (code, message) => {
    const h = { ...base, service: createService(failingDatabase(code, message), base.service.config, base.clock) };
    await expectUnavailable(await requests(h, { access_token: "lka_whatever", refresh_token: "lkr_whatever" }).refresh());
    const page = await call(h, `/t/${ws}/oauth2/authorize?client_id=spa`);
    expect(page.status).toBe(503);
    expect(page.headers.get("content-type")).toContain("text/html");
    const check = await call(h, `/t/${ws}/authorization/check`, {
      body: JSON.stringify({ resource: "https://api.example.test", permission: "read:things", organization_id: null }),
      headers: { "content-type": "application/json", authorization: "Bearer lka_whatever" },
    });
    expect(check.status).toBe(503);
    expect(check.headers.get("content-type")).toContain("application/problem+json");
    const handoff = await call(h, `/t/${ws}/auth/account/configuration`, { body: "{}", headers: { "content-type": "application/json", authorization: basic(M2M.client_id, M2M.secret) } });
    expect(handoff.status).toBe(503);
  });
});

describe.runIf(Boolean(inject("databaseUrl")))("real PostgreSQL refusals: a missing database, one not accepting connections, a read-only one", () => {
  const target = new URL(inject("databaseUrl") ?? "postgres://unused@127.0.0.1:5432/unused");
  const closed = `${target.pathname.slice(1)}_closed`;
  const ws = uniqueWorkspaceId("refused");
  let h: Harness;
  const handles: DatabaseHandle[] = [];
  const admin = () => postgres(target.toString(), { max: 1, onnotice: () => {} });

  async function over(url: URL): Promise<Harness> {
    const handle = await openDatabase({ databaseUrl: url.toString(), poolSize: 1 });
    handles.push(handle);
    return { ...h, service: createService(handle.db, h.service.config, h.clock) };
  }

  beforeAll(async () => {
    h = await createHarness();
    await seed(h, standardWorkspace(ws));
    const sql = admin();
    try {
      await sql.unsafe(`create database "${closed}" allow_connections false`);
    } finally {
      await sql.end();
    }
  });
  afterAll(async () => {
    for (const handle of handles) await handle.close();
    const sql = admin();
    try {
      await sql.unsafe(`drop database if exists "${closed}"`);
    } finally {
      await sql.end();
    }
  });

  it("a database that does not exist (3D000) answers 503", async () => {
    const url = new URL(target);
    url.pathname = `/${target.pathname.slice(1)}_missing`;
    const r = requests(await over(url), { access_token: "lka_whatever", refresh_token: "lkr_whatever" }, ws);
    for (const send of [r.session, r.refresh, r.introspect]) await expectUnavailable(await send());
  });

  it("a database not accepting connections (55000) answers 503", async () => {
    const url = new URL(target);
    url.pathname = `/${closed}`;
    const r = requests(await over(url), { access_token: "lka_whatever", refresh_token: "lkr_whatever" }, ws);
    for (const send of [r.session, r.refresh, r.introspect]) await expectUnavailable(await send());
  });

  it("a read-only database (25006, a standby after failover) answers 503 where a write is needed, and rotates nothing", async () => {
    const r0 = await signIn(h, ws, { ...SPA, ...ADA });
    const tokens = await (await exchangeCode(h, ws, { code: r0.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: r0.verifier, client_id: SPA.client_id })).json();
    const url = new URL(target);
    url.searchParams.set("default_transaction_read_only", "on");
    const readOnly = requests(await over(url), tokens, ws);
    // Reads still answer; the rotation (a write) cannot happen.
    expect((await readOnly.session()).status).toBe(200);
    await expectUnavailable(await readOnly.refresh());
    expect((await requests(h, tokens, ws).refresh()).status).toBe(200);
  });

  it("a read-only database answers 503 with Retry-After on every write path, each in its route's shape, and nothing is written", async () => {
    const url = new URL(target);
    url.searchParams.set("default_transaction_read_only", "on");
    const ro = await over(url);
    // A workspace whose web application may open the account-security portal.
    const rw = uniqueWorkspaceId("read-only");
    const doc = standardWorkspace(rw);
    for (const app of doc.applications as { client_id: string; account_security?: boolean }[]) if (app.client_id === WEB.client_id) app.account_security = true;
    await seed(h, doc);
    const handoffApi = (harness: Harness, endpoint: string, body: object) =>
      call(harness, `/t/${rw}/auth/account/${endpoint}?client_id=${WEB.client_id}`, { method: "POST", body: JSON.stringify(body), headers: { authorization: basic(WEB.client_id, WEB.secret), "content-type": "application/json" } });
    expect((await handoffApi(h, "configuration", { callback_uri: "https://web.example.test/account/handoff", return_uri: "https://web.example.test/settings", version: 0 })).status).toBe(200);
    // What a browser and the applications hold, made on the writable database.
    const web = await signIn(h, rw, { ...WEB, ...ADA, scope: "openid" });
    const webTokens = await (await exchangeCode(h, rw, { code: web.callback.searchParams.get("code")!, redirect_uri: WEB.redirect_uri, verifier: web.verifier, authorization: basic(WEB.client_id, WEB.secret) })).json();
    const pending = await signIn(h, rw, { ...SPA, ...ADA });
    const { query } = authorizeQuery(SPA);
    const started = await call(h, `/t/${rw}/oauth2/authorize?${query}`);
    const jar = new Jar().take(started);
    const tx = new URL(started.headers.get("location")!, PUBLIC_URL).searchParams.get("tx")!;
    const view = await signInView(contextFor(h.service, (await resolveWorkspace(h.service, rw))!), tx, jar.header());
    if (view.kind !== "step") throw new Error("no sign-in step");
    const webClient = { authorization: basic(WEB.client_id, WEB.secret) };

    const writes: [string, () => Promise<Response>, RegExp][] = [
      ["a new sign-in (authorize)", () => call(ro, `/t/${rw}/oauth2/authorize?${authorizeQuery(SPA).query}`), /text\/html/],
      ["a password sign-in", () => call(ro, `/t/${rw}/sign-in/password`, { form: { tx, csrf: view.csrf, email: ADA.email, password: ADA.password }, cookie: jar.header(), headers: { origin: PUBLIC_URL } }), /text\/html/],
      ["a code exchange", () => exchangeCode(ro, rw, { code: pending.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: pending.verifier, client_id: SPA.client_id }), /json/],
      ["a refresh", () => call(ro, `/t/${rw}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: webTokens.refresh_token }, headers: webClient }), /json/],
      ["a revocation", () => call(ro, `/t/${rw}/oauth2/revoke`, { form: { token: webTokens.refresh_token }, headers: webClient }), /json/],
      ["a handoff launch", () => handoffApi(ro, "launch", { user_token: webTokens.access_token, state: "s".repeat(43) }), /json/],
      ["a handoff configuration", () => handoffApi(ro, "configuration", { callback_uri: "https://web.example.test/account/other", return_uri: "https://web.example.test/settings", version: 1 }), /json/],
      ["a sign-out", () => call(ro, `/t/${rw}/oidc/logout?${new URLSearchParams({ client_id: WEB.client_id, post_logout_redirect_uri: "https://web.example.test/signed-out" })}`, { cookie: web.jar.header() }), /text\/html/],
    ];
    for (const [what, send, shape] of writes) {
      const res = await send();
      expect(res.status, what).toBe(503);
      expect(res.headers.get("retry-after"), what).toBeTruthy();
      expect(res.headers.get("content-type"), what).toMatch(shape);
    }
    // What needs no write still answers: a sealed workload token, the session check.
    expect((await requests(ro, webTokens, rw).clientCredentials()).status).toBe(200);
    expect((await requests(ro, webTokens, rw).session()).status).toBe(200);
    // Nothing happened: the code, the refresh token and the sign-in's session are all still good on the writable database.
    expect((await exchangeCode(h, rw, { code: pending.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: pending.verifier, client_id: SPA.client_id })).status).toBe(200);
    expect((await call(h, `/t/${rw}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: webTokens.refresh_token }, headers: webClient })).status).toBe(200);
  });
});

/**
 * A TCP proxy to the database that can be cut the two ways a network fails: new connections
 * refused (nothing listens), and the connections already open black-holed (kept open, nothing
 * forwarded either way, no reset: what a dropped route or a frozen proxy looks like).
 */
function cuttableProxy(target: URL) {
  let server: net.Server | undefined;
  let port = 0;
  const pairs = new Set<[net.Socket, net.Socket]>();
  const listen = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 5432), target.hostname);
        const pair: [net.Socket, net.Socket] = [client, upstream];
        pairs.add(pair);
        client.pipe(upstream).pipe(client);
        const end = () => {
          client.destroy();
          upstream.destroy();
          pairs.delete(pair);
        };
        client.on("error", end).on("close", end);
        upstream.on("error", end).on("close", end);
      });
      server.listen(port, "127.0.0.1", () => {
        port = (server!.address() as net.AddressInfo).port;
        resolve();
      });
    });
  return {
    listen,
    url() {
      const url = new URL(target);
      url.host = `127.0.0.1:${port}`;
      return url.toString();
    },
    /** Refuses new connections (it stops listening at once; its 'close' waits for the open ones) and black-holes the open ones. */
    cut() {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
      server!.close();
    },
    destroy() {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      server?.close();
    },
  };
}

describe.runIf(Boolean(inject("databaseUrl")))("a network cut to the database (connections refused, open ones black-holed) for longer than the bounds", () => {
  const ws = uniqueWorkspaceId("cut");
  // Bounds of this pool: no connection within 1 s, or no answer within 1.5 s + 1 s, is a 503.
  const CONNECTION_WAIT_MS = 1000;
  const STATEMENT_TIMEOUT_MS = 1500;
  // The longest a request may take during the cut: the later bound, the watch's interval, and room for a busy machine.
  const LIMIT_MS = STATEMENT_TIMEOUT_MS + 1000 + 1500;
  const proxy = cuttableProxy(new URL(inject("databaseUrl") ?? "postgres://unused@127.0.0.1:5432/unused"));
  let h: Harness;
  let viaProxy: Harness;
  let handle: DatabaseHandle;

  beforeAll(async () => {
    h = await createHarness();
    await seed(h, standardWorkspace(ws));
    await proxy.listen();
    handle = await openDatabase({ databaseUrl: proxy.url(), poolSize: 4, connectionWaitMs: CONNECTION_WAIT_MS, statementTimeoutMs: STATEMENT_TIMEOUT_MS });
    viaProxy = { ...h, service: createService(handle.db, h.service.config, h.clock) };
  });
  afterAll(async () => {
    proxy.destroy();
    await handle.close();
  });

  it("answers every machine endpoint and the hosted page 503 with Retry-After within the bound, never hangs or 500s, and recovers when the network returns", async () => {
    const r0 = await signIn(viaProxy, ws, { ...SPA, ...ADA });
    const tokens = await (await exchangeCode(viaProxy, ws, { code: r0.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: r0.verifier, client_id: SPA.client_id })).json();
    const r = requests(viaProxy, tokens, ws);
    const endpoints: [string, () => Promise<Response>][] = [
      ["token (refresh)", r.refresh],
      ["introspection", r.introspect],
      ["session check", r.session],
      ["UserInfo", r.userinfo],
      ["hosted page (authorize)", () => call(viaProxy, `/t/${ws}/oauth2/authorize?${authorizeQuery(SPA).query}`)],
    ];
    // Every connection of the pool open and idle before the cut.
    await Promise.all([1, 2, 3, 4].map(() => r.session()));

    proxy.cut();
    const sent: Promise<unknown>[] = [];
    const outcomes: { what: string; status: number | "hang"; retryAfter: boolean; ms: number }[] = [];
    const send = async (what: string, request: () => Promise<Response>) => {
      const start = performance.now();
      const res = await Promise.race([request(), new Promise<"hang">((resolve) => setTimeout(() => resolve("hang"), LIMIT_MS).unref())]);
      const ms = performance.now() - start;
      if (res === "hang") return outcomes.push({ what, status: "hang", retryAfter: false, ms });
      await res.text();
      outcomes.push({ what, status: ms > LIMIT_MS ? "hang" : res.status, retryAfter: Boolean(res.headers.get("retry-after")), ms });
    };
    // Rounds of every endpoint at once, for twice the longest bound.
    const cutFor = 2 * (STATEMENT_TIMEOUT_MS + 1000);
    const cutAt = performance.now();
    while (performance.now() - cutAt < cutFor) {
      for (const [what, request] of endpoints) sent.push(send(what, request));
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    await Promise.all(sent);
    const count = (test: (o: (typeof outcomes)[number]) => boolean) => outcomes.filter(test).length;
    const summary = { total: outcomes.length, unavailable: count((o) => o.status === 503 && o.retryAfter), hangs: count((o) => o.status === "hang"), errors: count((o) => o.status === 500) };
    const wrong = outcomes.filter((o) => o.status !== 503 || !o.retryAfter);
    expect(wrong, JSON.stringify(summary)).toEqual([]);
    expect(summary.unavailable).toBeGreaterThanOrEqual(5 * 5);

    // The network returns (the black-holed connections stay so): the pool serves again on new connections.
    await proxy.listen();
    let recovered: Response | undefined;
    for (const until = performance.now() + 10_000; performance.now() < until; await new Promise((resolve) => setTimeout(resolve, 200))) {
      recovered = await Promise.race([r.session(), new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), LIMIT_MS).unref())]);
      if (recovered?.status === 200) break;
    }
    expect(recovered?.status).toBe(200);
    expect((await recovered!.json()).active).toBe(true);
    // Nothing was consumed during the cut: the same refresh token still rotates.
    expect((await r.refresh()).status).toBe(200);
    for (const [what, request] of endpoints.slice(1)) expect((await request()).status, what).not.toBe(503);
  }, 60_000);
});

// PostgreSQL only: the embedded database is one session in this process, with no standby and no
// database-level settings to change under it.
describe.runIf(Boolean(inject("databaseUrl")))("a database that was read-only (a standby, default_transaction_read_only) and can write again", () => {
  const server = inject("databaseUrl") ?? "postgres://unused@127.0.0.1:5432/unused";
  // A database of its own: ALTER DATABASE reaches every session that connects to it.
  const name = freshDatabaseName("latchkey_read_only");
  const ws = uniqueWorkspaceId("writable-again");
  let handle: DatabaseHandle;
  let own: Harness;
  const admin = () => postgres(server, { max: 1, onnotice: () => {} });

  beforeAll(async () => {
    const url = await createDatabase(server, name);
    handle = await openDatabase({ databaseUrl: url, poolSize: 3 });
    await runMigrations(handle, url);
    const h = await createHarness();
    own = { ...h, service: createService(handle.db, h.service.config, h.clock), handle };
    await seed(own, standardWorkspace(ws));
  }, 120_000);
  afterAll(async () => {
    await handle.close();
    await dropDatabase(server, name);
  });

  it("discards the sessions it opened read-only: /readyz and sign-in recover by themselves once the database takes writes", async () => {
    const authorize = async () => (await call(own, `/t/${ws}/oauth2/authorize?${authorizeQuery(SPA).query}`)).status;
    const probe = readinessProbe(handle.db, { cacheMs: 0 });
    expect(await authorize()).toBeLessThan(400);
    expect(await probe.check()).toBe("ready");

    // The database turns read-only, and the pool's sessions are replaced (as after a failover to a standby).
    const sql = admin();
    try {
      await sql.unsafe(`alter database "${name}" set default_transaction_read_only = on`);
      await sql.unsafe(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}'`);
    } finally {
      await sql.end();
    }
    const during = await Promise.all([1, 2, 3, 4, 5, 6].map(() => authorize()));
    expect(during.every((status) => status === 503), String(during)).toBe(true);
    expect(await probe.check()).toBe("database read-only");

    // It takes writes again; the sessions opened meanwhile are still read-only until they are discarded.
    const again = admin();
    try {
      await again.unsafe(`alter database "${name}" reset default_transaction_read_only`);
    } finally {
      await again.end();
    }
    const until = performance.now() + 5000;
    let ready = await probe.check();
    while (ready !== "ready" && performance.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      ready = await probe.check();
    }
    expect(ready).toBe("ready");
    let status = await authorize();
    while (status >= 400 && performance.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      status = await authorize();
    }
    expect(status).toBeLessThan(400);
    // From then on every session can write.
    const after = await Promise.all([1, 2, 3, 4, 5, 6].map(() => authorize()));
    expect(after.every((s) => s < 400), String(after)).toBe(true);
  }, 60_000);
});

describe.runIf(Boolean(inject("databaseUrl")))("a statement that waits for a connection past its bound", () => {
  const target = new URL(inject("databaseUrl") ?? "postgres://unused@127.0.0.1:5432/unused");
  const table = `bound_probe_${randomBytes(4).toString("hex")}`;
  const admin = () => postgres(target.toString(), { max: 1, onnotice: () => {} });
  // A proxy that accepts connections and holds what they send until it is told to forward.
  let forwarding = false;
  const held: (() => void)[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.pause();
    const forward = () => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      sockets.add(upstream);
      client.pipe(upstream).pipe(client);
      client.resume();
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy()).on("error", () => client.destroy());
    };
    client.on("error", () => {});
    if (forwarding) forward();
    else held.push(forward);
  });

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const sql = admin();
    try {
      await sql.unsafe(`create table "${table}" (x int)`);
    } finally {
      await sql.end();
    }
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    server.close();
    const sql = admin();
    try {
      await sql.unsafe(`drop table if exists "${table}"`);
    } finally {
      await sql.end();
    }
  });

  it("fails as a dependency failure, is never sent once a connection opens, and the connection serves the pool", async () => {
    const url = new URL(target);
    url.host = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    const handle = await openDatabase({ databaseUrl: url.toString(), poolSize: 1, connectionWaitMs: 1000, statementTimeoutMs: 5000 });
    try {
      // The pool's one connection cannot open: the first statement waits on it, the insert behind it.
      const outcome = (statement: PromiseLike<unknown>) => Promise.resolve(statement).then(() => null, (error: unknown) => error);
      const started = performance.now();
      const [first, insert] = await Promise.all([outcome(handle.db.execute(text.raw("select 1"))), outcome(handle.db.execute(text.raw(`insert into "${table}" values (1)`)))]);
      expect(performance.now() - started).toBeLessThan(2000);
      for (const error of [first, insert]) expect(failureResponse(oauthFailures, error, "a statement past its bound").status).toBe(503);
      // The network lets the connections through: what the pool still held is not what was asked.
      forwarding = true;
      for (const forward of held.splice(0)) forward();
      let count: number | undefined;
      for (const until = performance.now() + 5000; count === undefined && performance.now() < until; ) {
        try {
          const [row] = (await handle.db.execute(text.raw(`select count(*)::int as n from "${table}"`))) as unknown as { n: number }[];
          count = row!.n;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      expect(count).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const [row] = (await handle.db.execute(text.raw(`select count(*)::int as n from "${table}"`))) as unknown as { n: number }[];
      expect(row!.n).toBe(0);
    } finally {
      await handle.close();
    }
  }, 30_000);
});

describe.runIf(Boolean(inject("databaseUrl")))("a statement waiting for its turn in a busy pool, the database answering", () => {
  it("is not refused at the connection wait: it runs once the connection frees, within the bound of a sent statement", async () => {
    const handle = await openDatabase({ databaseUrl: inject("databaseUrl"), poolSize: 1, connectionWaitMs: 300, statementTimeoutMs: 5000 });
    try {
      await handle.db.execute(text.raw("select 1"));
      // The pool's one connection is held by a transaction whose statements the database keeps
      // answering for a second, three times the connection wait; a statement outside waits its turn.
      let busy = true;
      const transaction = handle.db.transaction(async (tx) => {
        for (const until = performance.now() + 1000; performance.now() < until; ) await tx.execute(text.raw("select pg_sleep(0.05)"));
        busy = false;
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = performance.now();
      const [row] = (await handle.db.execute(text.raw("select 7 as n"))) as unknown as { n: number }[];
      expect(busy).toBe(false);
      expect(row!.n).toBe(7);
      expect(performance.now() - started).toBeGreaterThan(600);
      await transaction;
    } finally {
      await handle.close();
    }
  }, 30_000);
});

describe.runIf(Boolean(inject("databaseUrl")))("the connection that listens for other instances' changes, black-holed", () => {
  const proxy = cuttableProxy(new URL(inject("databaseUrl") ?? "postgres://unused@127.0.0.1:5432/unused"));
  afterAll(() => proxy.destroy());

  it("reports itself lost within its bound, so caches stop being trusted, and listens again when the network returns", async () => {
    await proxy.listen();
    const events: string[] = [];
    const changes = listen(proxy.url(), "latchkey_changes", { message: () => {}, listening: () => events.push("listening"), lost: () => events.push("lost") }, { checkEveryMs: 200, answerWithinMs: 500 });
    const until = async (what: string, ms: number) => {
      const start = performance.now();
      while (!events.includes(what) && performance.now() - start < ms) await new Promise((resolve) => setTimeout(resolve, 50));
      return events.includes(what);
    };
    try {
      expect(await until("listening", 5000)).toBe(true);
      events.length = 0;
      proxy.cut();
      expect(await until("lost", 2000)).toBe(true);
      expect(changes.active).toBe(false);
      await proxy.listen();
      expect(await until("listening", 10_000)).toBe(true);
      expect(changes.active).toBe(true);
    } finally {
      await changes.close();
    }
  }, 30_000);
});
