import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { openDatabase, type DatabaseHandle } from "../../db/client";
import { createService } from "../../lib/service";
import { basic, call, createHarness, exchangeCode, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, M2M, SPA, standardWorkspace } from "../helpers/fixtures";

const ws = uniqueWorkspaceId("down");

async function expectUnavailable(res: Response) {
  expect(res.status).toBe(503);
  expect(res.headers.get("retry-after")).toBeTruthy();
  const text = await res.text();
  expect(text).not.toContain('"active":true');
  expect(text).not.toContain("invalid_grant");
  expect(text).not.toContain("invalid_client");
}

function requests(h: Harness, tokens: { access_token: string; refresh_token: string }) {
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
