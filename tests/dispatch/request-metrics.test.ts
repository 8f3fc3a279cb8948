/**
 * The HTTP metrics of the production listener (lib/metrics/http.ts, recorded by lib/server/request-log.ts): requests counted
 * by family, method and status, durations by family, scraped from the Prometheus listener
 * (lib/metrics/listener.ts); labels from fixed sets only, never a workspace or a client.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../lib/http/log";
import { startMetricsListener, type MetricsListener } from "../../lib/metrics/listener";
import { createRequestListener } from "../../lib/server/node-server";
import { REQUEST_FAMILIES } from "../../lib/server/request-family";
import { HTTP_DURATION_BUCKETS, recordHttpRequests } from "../../lib/metrics/http";
import { API, M2M, WEB, standardWorkspace } from "../helpers/fixtures";
import { basic, createHarness, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";

const ws = uniqueWorkspaceId("counted");
const HOST = new URL(PUBLIC_URL).host;
let h: Harness;
let server: http.Server;
let scrape: MetricsListener;
const registry = new Registry();
let stopRecording: () => void;

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
  const next = (_req: http.IncomingMessage, res: http.ServerResponse) => void res.writeHead(200, { "content-type": "text/html" }).end("<p>page</p>");
  const log = createLogger({ format: "json", level: "silent" });
  // Every answer from now on is recorded in this file's registry (the server records in prom-client's default one).
  stopRecording = recordHttpRequests(registry);
  server = http.createServer(createRequestListener(h.service, PUBLIC_URL, next, { log }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  scrape = await startMetricsListener({ port: 0, host: "127.0.0.1" }, async () => ({ body: await registry.metrics(), contentType: registry.contentType }));
});
afterAll(async () => {
  stopRecording();
  await scrape.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function request(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: (server.address() as AddressInfo).port, method, path, headers: { host: HOST, ...headers }, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode!));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const form = { "content-type": "application/x-www-form-urlencoded" };

/** `name{labels} value` lines of the scrape, as label maps. */
function samples(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith(`${name}{`))
    .map((line) => {
      const labels = Object.fromEntries([...line.slice(name.length + 1, line.lastIndexOf("}")).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
      return { labels, value: Number(line.slice(line.lastIndexOf(" ") + 1)) };
    });
}

function value(text: string, name: string, labels: Record<string, string>): number {
  return samples(text, name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).length === Object.keys(labels).length)?.value ?? 0;
}

describe("the HTTP metrics", () => {
  it("count each answer by family, method and status, and time it by family, with labels from fixed sets only", async () => {
    for (let i = 0; i < 3; i++) expect(await request("GET", `/t/${ws}/.well-known/openid-configuration?client_id=${WEB.client_id}`)).toBe(200);
    expect(await request("GET", "/t/no-such-workspace/.well-known/openid-configuration")).toBe(404);
    const grant = new URLSearchParams({ grant_type: "client_credentials", resource: API, scope: "read:things" }).toString();
    expect(await request("POST", `/t/${ws}/oauth2/token`, { ...form, authorization: basic(M2M.client_id, M2M.secret) }, grant)).toBe(200);
    expect(await request("POST", `/t/${ws}/oauth2/token`, { ...form, authorization: basic(M2M.client_id, "wrong") }, grant)).toBe(401);
    expect(await request("DELETE", `/t/${ws}/oauth2/token`)).toBe(405);
    expect(await request("GET", "/healthz")).toBe(200);
    expect(await request("GET", "/console")).toBe(200);
    const total = "latchkey_http_requests_total";
    // Recorded once each answer is done, which may be just after the client has it.
    let text = "";
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`http://127.0.0.1:${scrape.port}/metrics`);
      expect(res.status).toBe(200);
      text = await res.text();
      if (samples(text, total).reduce((sum, s) => sum + s.value, 0) >= 9) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(value(text, total, { family: "discovery", method: "GET", status: "200" })).toBe(3);
    expect(value(text, total, { family: "discovery", method: "GET", status: "404" })).toBe(1);
    expect(value(text, total, { family: "token", method: "POST", status: "200" })).toBe(1);
    expect(value(text, total, { family: "token", method: "POST", status: "401" })).toBe(1);
    expect(value(text, total, { family: "token", method: "DELETE", status: "405" })).toBe(1);
    expect(value(text, total, { family: "health", method: "GET", status: "200" })).toBe(1);
    expect(value(text, total, { family: "console", method: "GET", status: "200" })).toBe(1);

    const duration = "latchkey_http_request_duration_seconds";
    expect(value(text, `${duration}_count`, { family: "discovery" })).toBe(4);
    expect(value(text, `${duration}_count`, { family: "token" })).toBe(3);
    expect(value(text, `${duration}_bucket`, { family: "token", le: "+Inf" })).toBe(3);
    expect(value(text, `${duration}_sum`, { family: "token" })).toBeGreaterThan(0);
    expect(samples(text, `${duration}_bucket`).filter((s) => s.labels.family === "token").map((s) => s.labels.le)).toEqual([...HTTP_DURATION_BUCKETS.map(String), "+Inf"]);

    // Bounded labels: a family, a method, a status, a bucket bound; never the workspace or a client.
    const all = [...samples(text, total), ...samples(text, `${duration}_bucket`), ...samples(text, `${duration}_count`), ...samples(text, `${duration}_sum`)];
    expect(all.length).toBeGreaterThan(10);
    for (const { labels } of all) {
      expect(Object.keys(labels).every((name) => ["family", "method", "status", "le"].includes(name))).toBe(true);
      expect(REQUEST_FAMILIES).toContain(labels.family);
      if (labels.method !== undefined) expect(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"]).toContain(labels.method);
      if (labels.status !== undefined) expect(labels.status).toMatch(/^(\d{3}|aborted)$/);
    }
    for (const secret of [ws, "no-such-workspace", M2M.client_id, WEB.client_id]) expect(text).not.toContain(`"${secret}"`);
  });
});
