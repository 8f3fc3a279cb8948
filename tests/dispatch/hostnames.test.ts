/**
 * The production listener (lib/server/node-server.ts) and hosts (lib/hostnames): the default host
 * serves everything as before; a workspace hostname serves its own workspace's issuer (the direct
 * path and the pages Next renders) and the pages' static files, never the console, the landing
 * page, the demo or another workspace; an unknown host serves nothing but the health checks; a
 * hostname directory that cannot be read fails closed. Runs the real listener on loopback with a
 * stand-in for Next that records what reaches it.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRequestListener } from "../../lib/server/node-server";
import { addHostname, applyHostnameVerification, hostnameTxtRecord } from "../../lib/hostnames/hostnames";
import { forgetHostnames } from "../../lib/hostnames/directory";
import type { Service } from "../../lib/service";
import { createHarness, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { standardWorkspace } from "../helpers/fixtures";

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
    for (const path of ["/console", "/console/w/x", "/", "/demo", `/t/${other}/.well-known/openid-configuration`, `/t/${other}/sign-in`, `/.well-known/oauth-authorization-server/t/${other}`]) {
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
