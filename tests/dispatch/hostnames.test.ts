/**
 * The production listener (lib/server/node-server.ts) and hosts (lib/hostnames): the default host
 * serves everything as before; a workspace hostname serves its own workspace's issuer (the direct
 * path and the pages Next renders) and the pages' static files, never the console, the landing
 * page, the demo or another workspace; an unknown host serves nothing but the health checks; a
 * hostname directory that cannot be read fails closed. Runs the real listener on loopback with a
 * stand-in for Next that records what reaches it.
 */
import http from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRequestListener } from "../../lib/server/node-server";
import { addHostname, applyHostnameVerification, hostnameTxtRecord } from "../../lib/hostnames/hostnames";
import { forgetHostnames } from "../../lib/hostnames/directory";
import type { Service } from "../../lib/service";
import { createHarness, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { standardWorkspace } from "../helpers/fixtures";
import { parseAnswer } from "../fuzz/wire";

const ws = uniqueWorkspaceId("hosts");
const other = uniqueWorkspaceId("hosts-other");
const HOSTNAME = `login.${ws}.test`;
const DEFAULT_HOST = new URL(PUBLIC_URL).host;
let h: Harness;
const servers: http.Server[] = [];
const reachedNext: string[] = [];

async function listen(service: Service): Promise<number> {
  const next = (req: http.IncomingMessage, res: http.ServerResponse) => {
    reachedNext.push(`${req.headers.host} ${req.url}`);
    res.writeHead(200, { "content-type": "text/html" }).end("<p>next</p>");
  };
  const server = http.createServer(createRequestListener(service, PUBLIC_URL, next));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

let port = 0;

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
  await seed(h, standardWorkspace(other));
  const claim = await addHostname(h.service.db, { workspaceId: ws, hostname: HOSTNAME, now: h.clock.now() });
  await applyHostnameVerification(h.service.db, { workspaceId: ws, id: claim.id, now: h.clock.now(), lookup: { ok: true, records: [hostnameTxtRecord(claim).value] } });
  forgetHostnames(h.service);
  port = await listen(h.service);
});
afterAll(() => Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())))));

function get(path: string, headers: Record<string, string>, on = port): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: on, method: "GET", path, headers, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** A request written byte for byte (`http.request` will not send an absolute-form target, a missing Host or a malformed one). */
function raw(head: string, on = port): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(on, "127.0.0.1");
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => {
      const answer = parseAnswer(Buffer.concat(chunks), "GET");
      if (!answer) return reject(new Error(`no answer to ${JSON.stringify(head)}`));
      resolve({ status: answer.status, body: answer.body.toString("utf8") });
    });
    socket.write(Buffer.from(`${head}\r\nConnection: close\r\n\r\n`, "latin1"));
  });
}

/** GET `target` with the Host header line `host` (null: none, over HTTP/1.0). */
const rawGet = (target: string, host: string | null, extra = "", on = port) =>
  raw(host === null ? `GET ${target} HTTP/1.0${extra}` : `GET ${target} HTTP/1.1\r\nHost: ${host}${extra}`, on);

const NOT_FOUND = async () => (await get(`/t/no-such-workspace/.well-known/openid-configuration`, { host: DEFAULT_HOST })).body;

describe("what each host serves", () => {
  it("a workspace hostname: its issuer (direct and pages) and static files; nothing else, with the generic 404", async () => {
    const notFound = await NOT_FOUND();
    const discovery = await get(`/t/${ws}/.well-known/openid-configuration`, { host: HOSTNAME });
    expect(discovery.status).toBe(200);
    expect(JSON.parse(discovery.body).issuer).toBe(`https://${HOSTNAME}/t/${ws}`);
    expect((await get(`/.well-known/oauth-authorization-server/t/${ws}`, { host: HOSTNAME })).status).toBe(200);
    reachedNext.length = 0;
    for (const path of [`/t/${ws}/sign-in?tx=x`, "/_next/static/chunks/app.js"]) expect((await get(path, { host: HOSTNAME })).status).toBe(200);
    expect(reachedNext).toEqual([`${HOSTNAME} /t/${ws}/sign-in?tx=x`, `${HOSTNAME} /_next/static/chunks/app.js`]);
    for (const path of ["/console", "/console/w/x", "/", "/demo", `/t/${other}/.well-known/openid-configuration`, `/t/${other}/sign-in`, `/.well-known/oauth-authorization-server/t/${other}`, "/_next/image?url=%2Fconsole&w=64&q=75", "/_next/data/x/console.json"]) {
      const res = await get(path, { host: HOSTNAME });
      expect([path, res.status, res.body]).toEqual([path, 404, notFound]);
    }
    expect(reachedNext).toHaveLength(2);
    expect((await get("/healthz", { host: HOSTNAME })).status).toBe(200);
  });

  it("an unknown host, and a hostname at another port: nothing but the health checks", async () => {
    const notFound = await NOT_FOUND();
    reachedNext.length = 0;
    for (const host of ["unknown.example.test", `${HOSTNAME}:8443`, "127.0.0.1"]) {
      for (const path of ["/console", "/", `/t/${ws}/.well-known/openid-configuration`, `/t/${ws}/sign-in`]) {
        const res = await get(path, { host });
        expect([host, path, res.status, res.body]).toEqual([host, path, 404, notFound]);
      }
      expect((await get("/healthz", { host })).status).toBe(200);
    }
    expect(reachedNext).toEqual([]);
  });

  it("the default host: everything, as before; X-Forwarded-Host is not read without TRUST_PROXY", async () => {
    reachedNext.length = 0;
    expect((await get("/console", { host: DEFAULT_HOST })).status).toBe(200);
    expect((await get("/console", { host: DEFAULT_HOST, "x-forwarded-host": HOSTNAME })).status).toBe(200);
    expect(reachedNext).toEqual([`${DEFAULT_HOST} /console`, `${DEFAULT_HOST} /console`]);
    const proxied = await listen({ ...h.service, config: { ...h.service.config, trustProxy: true } });
    expect((await get("/console", { host: "10.0.0.5:3000", "x-forwarded-host": HOSTNAME }, proxied)).status).toBe(404);
    const discovery = await get(`/t/${ws}/.well-known/openid-configuration`, { host: "10.0.0.5:3000", "x-forwarded-host": HOSTNAME }, proxied);
    expect(JSON.parse(discovery.body).issuer).toBe(`https://${HOSTNAME}/t/${ws}`);
  });

  it("fails closed when the hostnames cannot be read: 503 at any host but the default one", async () => {
    const broken = { ...h.service, cache: new Map(), db: new Proxy(h.service.db, { get: (target, key) => (key === "select" ? () => ({ from: () => ({ where: () => Promise.reject(new Error("database away")) }) }) : Reflect.get(target, key)) }) };
    const on = await listen(broken as Service);
    const errors: unknown[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void errors.push(args);
    try {
      expect((await get(`/t/${ws}/.well-known/openid-configuration`, { host: HOSTNAME }, on)).status).toBe(503);
    } finally {
      console.error = original;
    }
    expect(errors).toHaveLength(1);
  });
});

describe("a Host that is not a valid host name", () => {
  const [name] = DEFAULT_HOST.split(":");
  const INVALID = [`a_b.${name}`, `x_y.evil.test`, `a_b.${HOSTNAME}`, `${name}/x`, `evil.test/x`, `${name} x`, "evil test", `${name}:100000`, `${name}:0443`, `${name}:0`, `${name}:`, "", `[::1`, "[not:an:address]", `${name}, evil.test`, `${"a".repeat(64)}.${name}`];

  it("is an unknown host: the generic 404 at every path, the health checks excepted", async () => {
    const notFound = await NOT_FOUND();
    reachedNext.length = 0;
    for (const host of INVALID) {
      for (const path of ["/console", "/console/setup", "/", "/demo", `/t/${ws}/.well-known/openid-configuration`, `/.well-known/oauth-authorization-server/t/${ws}`, `/t/${ws}/sign-in`, "/_next/static/chunks/app.js"]) {
        const res = await rawGet(path, host);
        expect([host, path, res.status, res.body]).toEqual([host, path, 404, notFound]);
      }
      expect([host, (await rawGet("/healthz", host)).status]).toEqual([host, 200]);
    }
    expect(reachedNext).toEqual([]);
  });

  it("is also two Host lines, whichever comes first: the generic 404", async () => {
    const notFound = await NOT_FOUND();
    reachedNext.length = 0;
    for (const [first, second] of [
      [DEFAULT_HOST, "evil.test"],
      ["evil.test", DEFAULT_HOST],
      [DEFAULT_HOST, DEFAULT_HOST],
    ]) {
      for (const path of ["/console", `/t/${ws}/.well-known/openid-configuration`]) {
        const res = await rawGet(path, first, `\r\nHost: ${second}`);
        expect([first, second, path, res.status, res.body]).toEqual([first, second, path, 404, notFound]);
      }
    }
    expect(reachedNext).toEqual([]);
  });

  it("in X-Forwarded-Host behind a trusted proxy, whatever Host says: the generic 404", async () => {
    const notFound = await NOT_FOUND();
    const proxied = await listen({ ...h.service, config: { ...h.service.config, trustProxy: true } });
    reachedNext.length = 0;
    // A list's first entry is the host (the trusted proxy's), so only single entries here.
    for (const forwarded of INVALID.filter((host) => !host.includes(","))) {
      for (const path of ["/console", `/t/${ws}/.well-known/openid-configuration`]) {
        const res = await rawGet(path, DEFAULT_HOST, `\r\nX-Forwarded-Host: ${forwarded}`, proxied);
        expect([forwarded, path, res.status, res.body]).toEqual([forwarded, path, 404, notFound]);
      }
    }
    expect(reachedNext).toEqual([]);
    // Without X-Forwarded-Host, Host decides as before.
    expect((await rawGet(`/t/${ws}/.well-known/openid-configuration`, DEFAULT_HOST, "", proxied)).status).toBe(200);
  });

  it("differs from no host at all: an HTTP/1.0 request without Host reaches the default host; names are compared in lower case without a trailing dot", async () => {
    reachedNext.length = 0;
    expect((await rawGet("/console", null)).status).toBe(200);
    expect((await rawGet("/console", `${DEFAULT_HOST.toUpperCase()}.`)).status).toBe(200);
    expect((await rawGet(`/t/${ws}/.well-known/openid-configuration`, `${HOSTNAME.toUpperCase()}.`)).status).toBe(200);
    expect(reachedNext).toEqual([`undefined /console`, `${DEFAULT_HOST.toUpperCase()}. /console`]);
  });
});

describe("paths that are not in normal form", () => {
  const DOTTED = [
    `/t/${ws}/../../console`,
    `/t/${ws}/../../console/setup`,
    `/t/${ws}/../../demo`,
    `/t/${ws}/../../`,
    `/t/${ws}/..`,
    "/_next/../console",
    "/_next/static/../../console",
    `/t/${ws}/%2e%2e/%2e%2e/console`,
    `/t/${ws}/%2E%2e/.%2E/console`,
    `/t/${ws}/%2e./%2E./console/setup`,
    "/_next/%2e%2e/console",
    `/t/${ws}/./sign-in`,
    `/t/${ws}/..\\..\\console`,
    "/_next\\..\\console",
    "//console",
    `/t/${ws}/../${other}/.well-known/openid-configuration`,
    `/t/${other}/../${ws}/.well-known/openid-configuration`,
    `/.well-known/oauth-authorization-server/t/${ws}/../${other}`,
  ];

  it("are refused with 400 at a workspace hostname and at the default host, before any rule or Next sees them", async () => {
    reachedNext.length = 0;
    for (const host of [HOSTNAME, DEFAULT_HOST]) {
      for (const path of DOTTED) {
        const res = await rawGet(path, host);
        expect([host, path, res.status, JSON.parse(res.body).error]).toEqual([host, path, 400, "invalid_request"]);
      }
    }
    expect(reachedNext).toEqual([]);
    // The same paths written out are served as before.
    expect((await rawGet(`/t/${ws}/.well-known/openid-configuration`, HOSTNAME)).status).toBe(200);
    expect((await rawGet("/console", HOSTNAME)).status).toBe(404);
  });
});

describe("an absolute-form request target", () => {
  it("names the request's host by its authority, judged by the same rule as Host; the path goes on in origin form", async () => {
    const notFound = await NOT_FOUND();
    reachedNext.length = 0;
    for (const target of [`http://evil.test/t/${ws}/.well-known/openid-configuration`, `https://evil.test/t/${ws}/sign-in`, "http://evil.test/console", `http://a_b.${HOSTNAME}/t/${ws}/.well-known/openid-configuration`, `http://user@${DEFAULT_HOST}/console`, `http:///console`]) {
      for (const host of [DEFAULT_HOST, HOSTNAME]) {
        const res = await rawGet(target, host);
        expect([target, host, res.status, res.body]).toEqual([target, host, 404, notFound]);
      }
    }
    expect(reachedNext).toEqual([]);
    const discovery = await rawGet(`http://${HOSTNAME}/t/${ws}/.well-known/openid-configuration`, DEFAULT_HOST);
    expect([discovery.status, JSON.parse(discovery.body).issuer]).toEqual([200, `https://${HOSTNAME}/t/${ws}`]);
    expect((await rawGet(`HTTPS://${DEFAULT_HOST}/t/${ws}/sign-in?tx=x`, "evil.test")).status).toBe(200);
    expect((await rawGet(`http://${DEFAULT_HOST}?x=1`, "evil.test")).status).toBe(200);
    expect(reachedNext).toEqual([`${DEFAULT_HOST} /t/${ws}/sign-in?tx=x`, `${DEFAULT_HOST} /?x=1`]);
    expect((await rawGet(`http://${DEFAULT_HOST}/t/${ws}/../../console`, DEFAULT_HOST)).status).toBe(400);
  });

  it("any other form (`*`, `host:port`, a relative path) is refused with 400", async () => {
    reachedNext.length = 0;
    for (const head of [`OPTIONS * HTTP/1.1\r\nHost: ${DEFAULT_HOST}`, `GET console HTTP/1.1\r\nHost: ${DEFAULT_HOST}`, `GET ftp://${DEFAULT_HOST}/console HTTP/1.1\r\nHost: ${DEFAULT_HOST}`]) {
      expect([head, (await raw(head)).status]).toEqual([head, 400]);
    }
    expect(reachedNext).toEqual([]);
  });
});
