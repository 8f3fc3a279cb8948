/**
 * Server-side requests reach public addresses only (lib/outbound): an upstream issuer on loopback,
 * link-local, private or unique-local addresses is refused before any connection, whether named
 * by an IP literal or by a host name that resolves there, and on every redirect; the connection is
 * made to the address that was checked; answers are bounded in size and time. A federated sign-in
 * through a refused issuer ends on the hosted "not set up correctly" page, and the upstream never
 * hears of it, and the log says why under the request's id. The installation's allow-list
 * (UPSTREAM_ALLOW) admits its own networks and hosts, judged on the resolved addresses and on every
 * redirect. ALLOW_PRIVATE_UPSTREAMS (off here) lifts the address check for development.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../../lib/config";
import { OutboundRefused, outboundFetch } from "../../../lib/outbound/fetch";
import { allowListed, refusedAddress } from "../../../lib/outbound/addresses";
import { createLogger, inRequest, serverLog, setServerLog } from "../../../lib/http/log";
import { forgetDiscoveries } from "../../../lib/federation/upstream/oidc";
import { WEB, authzWorkspace } from "../../helpers/fixtures";
import { createService } from "../../../lib/service";
import { createHarness, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { startSignIn } from "../../helpers/factors/sign-in";
import { addSocialProvider, expectHostedError, startSocial } from "../../helpers/federation/setup";

/** A loopback server that counts what reaches it; `answer` decides each reply. */
async function loopback(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void, host = "127.0.0.1") {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return { port, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const servers: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

async function server(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void, host?: string) {
  const s = await loopback(answer, host);
  servers.push(s);
  return s;
}

const ok = (_req: http.IncomingMessage, res: http.ServerResponse) => res.writeHead(200, { "content-type": "application/json" }).end('{"issuer":"x"}');

async function refusal(promise: Promise<unknown>): Promise<OutboundRefused> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OutboundRefused);
  return error as OutboundRefused;
}

describe("the address rule", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.8.9.10", "loopback"],
    ["::1", "loopback"],
    ["169.254.169.254", "link-local"],
    ["fe80::1", "link-local"],
    ["10.0.0.1", "private"],
    ["172.16.5.4", "private"],
    ["172.31.255.255", "private"],
    ["192.168.0.1", "private"],
    ["fc00::1", "unique-local"],
    ["fd12:3456:789a::1", "unique-local"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["224.0.0.251", "multicast"],
    ["ff02::1", "multicast"],
    ["255.255.255.255", "reserved"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:a9fe:a9fe", "link-local"],
    ["64:ff9b::10.0.0.1", "private"],
    ["2002:c0a8:0101::1", "private"],
  ])("refuses %s (%s)", (address, label) => {
    expect(refusedAddress(address)).toBe(label);
  });

  it.each(["8.8.8.8", "93.184.215.14", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])("lets %s through", (address) => {
    expect(refusedAddress(address)).toBeNull();
  });
});

describe("the outbound fetch", () => {
  const guarded = (extra = {}) => outboundFetch({ allowPrivate: false, ...extra });

  it("refuses an IP literal on loopback before connecting: the server never hears of it", async () => {
    const s = await server(ok);
    const refused = await refusal(guarded()(`http://127.0.0.1:${s.port}/.well-known/openid-configuration`));
    expect(refused.reason).toBe("address");
    expect(refused.message).toContain("loopback");
    await refusal(guarded()(`http://[::ffff:127.0.0.1]:${s.port}/`));
    expect(s.seen).toEqual([]);
  });

  it("refuses a host name after resolution: localhost, and a name with one private address among public ones", async () => {
    const s = await server(ok);
    expect((await refusal(guarded()(`http://localhost:${s.port}/`))).message).toMatch(/localhost \((127\.0\.0\.1|::1)\)/);
    const mixed = guarded({ resolve: async () => [{ address: "93.184.215.14", family: 4 }, { address: "127.0.0.1", family: 4 }] });
    await refusal(mixed(`http://upstream.example.test:${s.port}/`));
    expect(s.seen).toEqual([]);
  });

  it("connects to the address it checked (the resolver's answer, never a second lookup)", async () => {
    const s = await server(ok);
    let lookups = 0;
    const pinned = outboundFetch({
      allowPrivate: false,
      resolve: async () => {
        lookups++;
        return [{ address: "127.0.0.1", family: 4 }];
      },
      // Only for this test: loopback counts as public, so the request goes through.
      refuse: (address) => (address === "127.0.0.1" ? null : refusedAddress(address)),
    });
    const res = await pinned(`http://upstream.example.test:${s.port}/x`);
    expect(res.status).toBe(200);
    expect(lookups).toBe(1);
    expect(s.seen).toEqual(["GET /x"]);
  });

  it("checks every redirect it follows, and follows none with redirect: manual", async () => {
    const target = await server(ok);
    const first = await server((_req, res) => res.writeHead(302, { location: `http://127.0.0.2:${target.port}/metadata` }).end());
    // 127.0.0.1 passes here so the first hop is made; 127.0.0.2 is refused as the rule refuses it.
    const refuse = (address: string) => (address === "127.0.0.1" ? null : refusedAddress(address));
    const refused = await refusal(outboundFetch({ allowPrivate: false, refuse })(`http://127.0.0.1:${first.port}/start`));
    expect(refused.message).toContain("127.0.0.2");
    expect(first.seen).toEqual(["GET /start"]);
    expect(target.seen).toEqual([]);
    const manual = await outboundFetch({ allowPrivate: false, refuse })(`http://127.0.0.1:${first.port}/start`, { redirect: "manual" });
    expect(manual.status).toBe(302);
    expect(target.seen).toEqual([]);
  });

  it("bounds the number of redirects", async () => {
    const loop = await server((req, res) => res.writeHead(302, { location: `/again${req.url}` }).end());
    expect((await refusal(outboundFetch({ allowPrivate: true })(`http://127.0.0.1:${loop.port}/`))).reason).toBe("redirects");
    expect(loop.seen.length).toBe(4);
  });

  it("bounds the answer's size: a declared length over the bound fails at once, a streamed one when read", async () => {
    const big = "x".repeat(2 * 1024 * 1024);
    const declared = await server((_req, res) => res.writeHead(200, { "content-length": String(big.length) }).end(big));
    expect((await refusal(outboundFetch({ allowPrivate: true })(`http://127.0.0.1:${declared.port}/`))).reason).toBe("too-large");
    const streamed = await server((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(big);
    });
    const chunked = await server((_req, res) => {
      res.writeHead(200, { "transfer-encoding": "chunked" });
      for (let i = 0; i < 4; i++) res.write(big.slice(0, 512 * 1024 + 1));
      res.end();
    });
    for (const s of [streamed, chunked]) {
      const res = await outboundFetch({ allowPrivate: true, maxBytes: 1024 * 1024 })(`http://127.0.0.1:${s.port}/`).catch((e: unknown) => e);
      if (res instanceof Response) expect((await refusal(res.text())).reason).toBe("too-large");
      else expect((res as OutboundRefused).reason).toBe("too-large");
    }
    const small = await server(ok);
    expect(await (await outboundFetch({ allowPrivate: true })(`http://127.0.0.1:${small.port}/`)).json()).toEqual({ issuer: "x" });
  });

  it("bounds the time an answer may take", async () => {
    const silent = await server(() => {});
    const started = Date.now();
    const error = await outboundFetch({ allowPrivate: true, timeoutMs: 200 })(`http://127.0.0.1:${silent.port}/`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("posts a body and returns the answer's headers (the token request's shape)", async () => {
    const echo = await server((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => res.writeHead(200, { "content-type": "application/json", "x-seen-type": req.headers["content-type"] ?? "" }).end(JSON.stringify({ body })));
    });
    const res = await outboundFetch({ allowPrivate: true })(`http://127.0.0.1:${echo.port}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code: "c" }),
    });
    expect(res.headers.get("x-seen-type")).toBe("application/x-www-form-urlencoded");
    expect(await res.json()).toEqual({ body: "grant_type=authorization_code&code=c" });
  });
});

const configBase = { MASTER_KEY: "a".repeat(64), DATA_DIR: "/tmp/latchkey-outbound-config" };

describe("ALLOW_PRIVATE_UPSTREAMS", () => {
  it("is off by default, on for development, and refused with an https PUBLIC_URL", () => {
    const base = configBase;
    expect(loadConfig(base).allowPrivateUpstreams).toBe(false);
    expect(loadConfig({ ...base, ALLOW_PRIVATE_UPSTREAMS: "true" }).allowPrivateUpstreams).toBe(true);
    expect(() => loadConfig({ ...base, ALLOW_PRIVATE_UPSTREAMS: "true", PUBLIC_URL: "https://auth.example.com" })).toThrow(/ALLOW_PRIVATE_UPSTREAMS.*UPSTREAM_ALLOW/);
    expect(() => loadConfig({ ...base, ALLOW_PRIVATE_UPSTREAMS: "yes" })).toThrow(/ALLOW_PRIVATE_UPSTREAMS/);
  });
});

describe("UPSTREAM_ALLOW", () => {
  const https = { ...configBase, PUBLIC_URL: "https://auth.example.com" };

  it("is read at start-up, with an https PUBLIC_URL: host names and IPv4 and IPv6 networks, normalized", () => {
    expect(loadConfig(https).upstreamAllow).toEqual({ hosts: [], networks: [] });
    expect(loadConfig({ ...https, UPSTREAM_ALLOW: " ADFS.Corp.Example. , 10.0.0.0/8,172.16.4.20, FD00::/8, [fe80::1]/128, keycloak-1.internal," }).upstreamAllow).toEqual({
      hosts: ["adfs.corp.example", "keycloak-1.internal"],
      networks: ["10.0.0.0/8", "172.16.4.20/32", "fd00::/8", "fe80::1/128"],
    });
  });

  it.each([
    ["10.0.0.0/33", /"10\.0\.0\.0\/33" needs a prefix length from 1 to 32/],
    ["fd00::/129", /needs a prefix length from 1 to 128/],
    ["10.0.0.0/x", /needs a prefix length/],
    ["0.0.0.0/0", /would admit every address/],
    ["::/0", /would admit every address/],
    ["fe80::1%eth0/128", /names an interface/],
    ["10.0.0.256", /is neither a host name .* nor a network/],
    ["idp.corp.example:443", /is neither a host name/],
    ["https://idp.corp.example", /is neither a host name/],
    ["*.corp.example", /is neither a host name/],
    ["idp.corp.example/24", /is neither a host name/],
    ["-idp.corp.example", /is neither a host name/],
  ])("refuses %s at start-up with a line that names it", (entry, message) => {
    expect(() => loadConfig({ ...https, UPSTREAM_ALLOW: `idp.ok.example, ${entry}` })).toThrow(message);
    expect(() => loadConfig({ ...https, UPSTREAM_ALLOW: entry })).toThrow(/^UPSTREAM_ALLOW: /);
  });

  it("admits a listed network whatever its range, and a listed host name only into the internal ranges", () => {
    const admitted = allowListed({ hosts: ["adfs.corp.example"], networks: ["10.20.0.0/16", "127.0.0.0/8", "fd00:1::/32", "169.254.169.254/32", "0.0.0.0/8"] });
    const judge = (host: string, address: string) => admitted(host, address, refusedAddress(address)!);
    // Networks: any destination inside, IPv4-in-IPv6 forms judged as the IPv4 address.
    expect(judge("anything.example", "10.20.3.4")).toBe(true);
    expect(judge("anything.example", "10.21.3.4")).toBe(false);
    expect(judge("anything.example", "127.0.0.1")).toBe(true);
    expect(judge("anything.example", "::ffff:127.0.0.1")).toBe(true);
    expect(judge("anything.example", "fd00:1:2::3")).toBe(true);
    expect(judge("anything.example", "fd00:2::3")).toBe(false);
    expect(judge("anything.example", "::1")).toBe(false);
    expect(judge("anything.example", "169.254.169.254")).toBe(true);
    expect(judge("anything.example", "169.254.169.253")).toBe(false);
    // Never a destination, listed or not.
    expect(judge("anything.example", "0.0.0.0")).toBe(false);
    // A listed host name: its own network's private and unique-local addresses, not loopback or link-local (cloud metadata).
    const byName = allowListed({ hosts: ["adfs.corp.example"], networks: [] });
    const judgeName = (host: string, address: string) => byName(host, address, refusedAddress(address)!);
    for (const address of ["10.99.0.5", "192.168.1.10", "172.20.0.1", "fd12::5", "100.64.1.1", "::ffff:10.1.1.1"]) expect(judgeName("ADFS.corp.example.", address)).toBe(true);
    for (const address of ["10.99.0.5", "fd12::5"]) expect(judgeName("other.corp.example", address)).toBe(false);
    for (const address of ["127.0.0.1", "::1", "::ffff:127.0.0.1", "169.254.169.254", "fe80::1", "224.0.0.1", "0.0.0.0", "::"]) expect(judgeName("adfs.corp.example", address)).toBe(false);
    expect(allowListed(undefined)("adfs.corp.example", "10.0.0.1", "private")).toBe(false);
  });

  const listening = (networks: string[], extra = {}) => outboundFetch({ allowPrivate: false, allow: { hosts: [], networks }, ...extra });

  it("reaches an address inside a listed network; one outside the list is still refused before any connection", async () => {
    const s = await server(ok);
    expect((await listening(["127.0.0.0/8"])(`http://127.0.0.1:${s.port}/inside`)).status).toBe(200);
    // Every address the name resolves to is checked: both of localhost's are listed.
    expect((await listening(["127.0.0.1/32", "::1/128"])(`http://localhost:${s.port}/by-name`)).status).toBe(200);
    const outside = await refusal(listening(["127.0.0.2/32", "10.0.0.0/8"])(`http://127.0.0.1:${s.port}/outside`));
    expect(outside.message).toBe("Requests to 127.0.0.1 are refused: a loopback address is not a public one, and UPSTREAM_ALLOW does not list it");
    await refusal(listening(["127.0.0.2/32"])(`http://localhost:${s.port}/outside`));
    expect(s.seen).toEqual(["GET /inside", "GET /by-name"]);
  });

  it("a listed host name: resolved once, the connection made to the address that was checked; another name is refused", async () => {
    const s = await server(ok);
    const lookups: string[] = [];
    const policy = {
      allowPrivate: false,
      allow: { hosts: ["idp.corp.example"], networks: [] },
      resolve: async (hostname: string) => {
        lookups.push(hostname);
        return [{ address: "127.0.0.1", family: 4 }];
      },
      // Only for this test: the listener's loopback address stands for an address on the internal network.
      refuse: (address: string) => (address === "127.0.0.1" ? "private" : refusedAddress(address)),
    };
    expect((await outboundFetch(policy)(`http://idp.corp.example:${s.port}/listed`)).status).toBe(200);
    expect((await refusal(outboundFetch(policy)(`http://other.corp.example:${s.port}/unlisted`))).message).toContain("other.corp.example (127.0.0.1)");
    expect(lookups).toEqual(["idp.corp.example", "other.corp.example"]);
    expect(s.seen).toEqual(["GET /listed"]);
    // As loopback (what the address really is), a host name alone does not admit it.
    await refusal(outboundFetch({ ...policy, refuse: refusedAddress })(`http://idp.corp.example:${s.port}/loopback`));
    expect(s.seen).toEqual(["GET /listed"]);
  });

  it("checks every redirect against the same list", async () => {
    const target = await server(ok, "127.0.0.2");
    const first = await server((_req, res) => res.writeHead(302, { location: `http://127.0.0.2:${target.port}/next` }).end());
    const refused = await refusal(listening(["127.0.0.1/32"])(`http://127.0.0.1:${first.port}/start`));
    expect(refused.message).toContain("127.0.0.2");
    expect(target.seen).toEqual([]);
    const followed = await listening(["127.0.0.0/8"])(`http://127.0.0.1:${first.port}/start`);
    expect(followed.status).toBe(200);
    expect(target.seen).toEqual(["GET /next"]);
  });

  it("the service's requests follow the configured list", async () => {
    const s = await server(ok);
    const config = loadConfig({ ...https, UPSTREAM_ALLOW: "127.0.0.0/8" });
    const service = createService(undefined as never, config);
    expect((await service.fetch(`http://127.0.0.1:${s.port}/service`)).status).toBe(200);
    const none = createService(undefined as never, loadConfig(https));
    await refusal(none.fetch(`http://127.0.0.1:${s.port}/service`));
    expect(s.seen).toEqual(["GET /service"]);
  });
});

describe("a federated sign-in through an issuer on a private address", () => {
  let h: Harness;
  const ws = uniqueWorkspaceId("outbound");
  const unconfigured = serverLog();
  afterEach(() => setServerLog(unconfigured));

  beforeAll(async () => {
    h = await createHarness({ allowPrivateUpstreams: false });
    await seed(h, authzWorkspace(ws));
  });

  it("ends on the hosted misconfiguration page and never reaches the upstream", async () => {
    const upstream = await server(ok);
    forgetDiscoveries();
    await addSocialProvider(h, ws, { key: "internal", preset: "oidc", name: "Internal ID", clientId: "c", clientSecret: "s".repeat(32), config: { issuer: `http://127.0.0.1:${upstream.port}` }, applications: [WEB.client_id] });
    const s = await startSignIn(h, ws, { ...WEB, scope: "openid email" });
    await expectHostedError(await startSocial(h, s, "internal"), "federation_misconfigured");
    expect(upstream.seen).toEqual([]);
  });

  it("says 'not set up' also when the refusal comes from another copy of the outbound module (the server's, read by Next's route bundle), and logs why under the request id", async () => {
    const upstream = await server(ok);
    forgetDiscoveries();
    // The production server creates the service (and its fetch) from its own copy of lib/outbound;
    // the federation routes run in Next's bundle, which carries another.
    vi.resetModules();
    const serverCopy = (await import("../../../lib/outbound/fetch")) as typeof import("../../../lib/outbound/fetch");
    expect(serverCopy.OutboundRefused).not.toBe(OutboundRefused);
    const fetchBefore = h.service.fetch;
    h.service.fetch = serverCopy.outboundFetch({ allowPrivate: false });
    const lines: string[] = [];
    setServerLog(createLogger({ format: "json", level: "info" }, { write: (text: string) => void lines.push(text) }));
    try {
      await addSocialProvider(h, ws, { key: "internal-2", preset: "oidc", name: "Internal ID", clientId: "c", clientSecret: "s".repeat(32), config: { issuer: `http://127.0.0.1:${upstream.port}/realms/corp?tenant=secret-query` }, applications: [WEB.client_id] });
      const s = await startSignIn(h, ws, { ...WEB, scope: "openid email" });
      const res = await inRequest("req-refused-upstream", () => startSocial(h, s, "internal-2"));
      const body = await res.text();
      expect(res.status).toBe(502);
      expect(body).toContain("<h1>Sign-in option not set up</h1>");
      expect(body).toContain("This sign-in option is not set up correctly.");
      expect(body).toContain("server_error");
      expect(body).not.toContain("Sign-in provider unavailable");
    } finally {
      h.service.fetch = fetchBefore;
    }
    expect(upstream.seen).toEqual([]);
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const refused = records.filter((r) => r.msg === `federated sign-in at ${ws}: upstream refused`);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ level: "warn", request_id: "req-refused-upstream", err: "Requests to 127.0.0.1 are refused: a loopback address is not a public one, and UPSTREAM_ALLOW does not list it" });
    // Hosts and addresses only: no path, no query, no client secret.
    expect(lines.join("")).not.toMatch(/realms|secret-query|s{32}/);
  });
});

describe("a federated sign-in through an issuer in a network UPSTREAM_ALLOW lists, with an https PUBLIC_URL", () => {
  let h: Harness;
  const ws = uniqueWorkspaceId("allowed");

  beforeAll(async () => {
    h = await createHarness({ allowPrivateUpstreams: false, upstreamAllow: { hosts: [], networks: ["127.0.0.0/8"] } });
    await seed(h, authzWorkspace(ws));
  });

  it("reaches the issuer's discovery and sends the browser to its authorization endpoint", async () => {
    const upstream = await server((req, res) => {
      const issuer = `http://127.0.0.1:${(req.socket.address() as AddressInfo).port}`;
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({ issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks`, response_types_supported: ["code"] }),
      );
    });
    forgetDiscoveries();
    await addSocialProvider(h, ws, { key: "internal", preset: "oidc", name: "Internal ID", clientId: "c", clientSecret: "s".repeat(32), config: { issuer: `http://127.0.0.1:${upstream.port}` }, applications: [WEB.client_id] });
    const s = await startSignIn(h, ws, { ...WEB, scope: "openid email" });
    const res = await startSocial(h, s, "internal");
    expect(res.status).toBe(303);
    expect(new URL(res.headers.get("location")!).origin + new URL(res.headers.get("location")!).pathname).toBe(`http://127.0.0.1:${upstream.port}/authorize`);
    expect(upstream.seen).toEqual(["GET /.well-known/openid-configuration"]);
  });
});
