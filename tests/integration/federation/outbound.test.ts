/**
 * Server-side requests reach public addresses only (lib/outbound): an upstream issuer on loopback,
 * link-local, private or unique-local addresses is refused before any connection, whether named
 * by an IP literal or by a host name that resolves there, and on every redirect; the connection is
 * made to the address that was checked; answers are bounded in size and time. A federated sign-in
 * through a refused issuer ends on the hosted "not set up correctly" page, and the upstream never
 * hears of it. ALLOW_PRIVATE_UPSTREAMS (off here) lifts the address check for development.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../lib/config";
import { OutboundRefused, outboundFetch } from "../../../lib/outbound/fetch";
import { refusedAddress } from "../../../lib/outbound/addresses";
import { forgetDiscoveries } from "../../../lib/federation/upstream/oidc";
import { WEB, authzWorkspace } from "../../helpers/fixtures";
import { createHarness, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { startSignIn } from "../../helpers/factors/sign-in";
import { addSocialProvider, expectHostedError, startSocial } from "../../helpers/federation/setup";

/** A loopback server that counts what reaches it; `answer` decides each reply. */
async function loopback(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { port, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const servers: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

async function server(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const s = await loopback(answer);
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

describe("ALLOW_PRIVATE_UPSTREAMS", () => {
  it("is off by default, on for development, and refused with an https PUBLIC_URL", () => {
    const base = { MASTER_KEY: "a".repeat(64), DATA_DIR: "/tmp/latchkey-outbound-config" };
    expect(loadConfig(base).allowPrivateUpstreams).toBe(false);
    expect(loadConfig({ ...base, ALLOW_PRIVATE_UPSTREAMS: "true" }).allowPrivateUpstreams).toBe(true);
    expect(() => loadConfig({ ...base, ALLOW_PRIVATE_UPSTREAMS: "true", PUBLIC_URL: "https://auth.example.com" })).toThrow(/ALLOW_PRIVATE_UPSTREAMS/);
    expect(() => loadConfig({ ...base, ALLOW_PRIVATE_UPSTREAMS: "yes" })).toThrow(/ALLOW_PRIVATE_UPSTREAMS/);
  });
});

describe("a federated sign-in through an issuer on a private address", () => {
  let h: Harness;
  const ws = uniqueWorkspaceId("outbound");

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
});
