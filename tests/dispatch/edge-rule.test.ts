/**
 * The route table's edge rule (lib/server/router.ts `methodNotAllowed`) on the paths that were
 * route files of their own: the workspace's logo (a route of the table below /branding/logo), the
 * WebAuthn related origins document at the root of every host (a host route) and the console's
 * audit export and sign-in routes (route files outside the issuers, lib/server/next-adapter.ts
 * `methodsOf`). A method a path does not serve is 405 with an `Allow` listing exactly the methods
 * it does; HEAD answers as GET without a body; OPTIONS answers with `Allow`. Through the production
 * listener on a real socket (Next stood in for by the route table's own dispatch, as the route
 * files bind it) and through Next's binding, the route files' own exports.
 */
import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createRequestListener, writeResponse } from "../../lib/server/node-server";
import { dispatch } from "../../lib/server/router";
import { nodeRequest } from "../../lib/http/node-request";
import { notFoundResponse } from "../../lib/oauth/errors";
import { checkLogo, logoPath } from "../../lib/branding/logo";
import { writeLogo } from "../../lib/branding/store";
import { createHarness, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { standardWorkspace } from "../helpers/fixtures";
import * as logoFile from "../../app/t/[tenant]/branding/logo/[[...digest]]/route";
import * as relatedOriginsFile from "../../app/.well-known/webauthn/route";
import * as auditExportFile from "../../app/console/(app)/w/[workspace]/audit/export/route";
import * as signInStartFile from "../../app/console/auth/start/route";
import * as signOutFile from "../../app/console/auth/sign-out/route";

let h: Harness;
// The route files reach the service through getService (lib/service.ts): hand them this file's.
vi.mock("../../lib/service", async (original) => ({ ...(await original<typeof import("../../lib/service")>()), getService: async () => h.service }));

const ws = uniqueWorkspaceId("edge");
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");
let logo = "";
let server: http.Server;
let port = 0;

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
  const stored = checkLogo(PNG);
  await writeLogo(h.service.db, ws, stored, h.clock.now());
  logo = logoPath(ws, stored.digest);
  // Next stood in for by what the route files bind: the route table's dispatch (non-machine routes included).
  const next = async (req: http.IncomingMessage, res: http.ServerResponse) => writeResponse((await dispatch(nodeRequest(req, PUBLIC_URL), h.service)) ?? notFoundResponse(), res);
  server = http.createServer(createRequestListener(h.service, PUBLIC_URL, next));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server?.close(() => resolve())));

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function send(method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path, headers: { host: new URL(PUBLIC_URL).host, ...headers }, agent: false }, (res) => {
      let body = "";
      res.setEncoding("latin1");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers as Record<string, string>, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

type Handler = (request: Request, context: { params: Promise<Record<string, unknown>> }) => Promise<Response>;
type RouteFile = Record<"GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS", Handler>;

async function bound(file: unknown, method: string, path: string, params: Record<string, unknown>): Promise<Answer> {
  const handler = (file as RouteFile)[method as keyof RouteFile];
  expect(handler, `${method} is exported`).toBeTypeOf("function");
  const res = await handler(new Request(`${PUBLIC_URL}${path}`, { method }), { params: Promise.resolve(params) });
  // Node sends no body in answer to HEAD, whatever the handler gives (RFC 9110 §9.3.2), as the listener's path shows above.
  const body = method === "HEAD" ? (await res.body?.cancel(), "") : Buffer.from(await res.arrayBuffer()).toString("latin1");
  return { status: res.status, headers: Object.fromEntries(res.headers), body };
}

/** The headers that name the answer itself (its time, its request's id) left out, to compare two answers. */
const comparable = (headers: Record<string, string>) => {
  const { date: _date, "x-request-id": _id, connection: _c, "keep-alive": _k, "transfer-encoding": _t, ...rest } = headers;
  return rest;
};

/** The checks every moved path must pass, by whichever way `answer` sends a request. */
async function edgeRule(answer: (method: string) => Promise<Answer>, allow: string, getStatus: number, exactHead = true) {
  for (const method of ["PUT", "DELETE", "PATCH", ...(allow.includes("POST") ? [] : ["POST"]), "OPTIONS"]) {
    const res = await answer(method);
    expect([method, res.status, res.headers.allow], method).toEqual([method, 405, allow]);
  }
  if (!allow.startsWith("GET")) return;
  const get = await answer("GET");
  const head = await answer("HEAD");
  expect(get.status).toBe(getStatus);
  expect([head.status, head.body]).toEqual([get.status, ""]);
  if (exactHead) expect(comparable(head.headers)).toEqual(comparable(get.headers));
}

describe("the workspace's logo, a route of the table", () => {
  it("through the listener: 405 with Allow: GET, HEAD for other methods and OPTIONS; HEAD as GET without the body", async () => {
    await edgeRule((method) => send(method, logo), "GET, HEAD", 200);
    expect((await send("GET", logo)).body).toBe(PNG.toString("latin1"));
    // Not the logo (a digest that is not the current one): 404, and still 405 for another method.
    expect((await send("GET", `/t/${ws}/branding/logo/${"0".repeat(64)}`)).status).toBe(404);
    expect((await send("PUT", `/t/${ws}/branding/logo/${"0".repeat(64)}`)).headers.allow).toBe("GET, HEAD");
    expect((await send("TRACE", logo)).headers.allow).toBe("GET, HEAD");
  });

  it("through its Next binding, the same", async () => {
    await edgeRule((method) => bound(logoFile, method, logo, { tenant: ws, digest: logo.split("/").slice(-1) }), "GET, HEAD", 200);
  });

  it("under a workspace segment that is no workspace id (an encoded slash), never 405 without Allow", async () => {
    for (const method of ["GET", "PUT", "OPTIONS"]) {
      const res = await bound(logoFile, method, `/t/a%2Fb/branding/logo/${"0".repeat(64)}`, { tenant: "a/b", digest: ["0".repeat(64)] });
      expect([method, res.status]).toEqual([method, 404]);
    }
  });
});

describe("the WebAuthn related origins document, a host route", () => {
  it("through the listener: 405 with Allow: GET, HEAD for other methods and OPTIONS; HEAD as GET (the default host's 404) without the body", async () => {
    await edgeRule((method) => send(method, "/.well-known/webauthn"), "GET, HEAD", 404);
  });

  it("through its Next binding, the same", async () => {
    await edgeRule((method) => bound(relatedOriginsFile, method, "/.well-known/webauthn", {}), "GET, HEAD", 404);
  });
});

describe("the console's route files, outside the issuers", () => {
  it("the audit export: 405 with Allow: GET, HEAD for other methods and OPTIONS; HEAD as GET without the body (its console session refused alike)", async () => {
    const path = `/console/w/${ws}/audit/export`;
    await edgeRule((method) => bound(auditExportFile, method, path, { workspace: ws }), "GET, HEAD", 401);
  });

  it("the sign-in start and the sign-out: the methods each serves in Allow", async () => {
    await edgeRule((method) => bound(signInStartFile, method, "/console/auth/start", {}), "GET, HEAD", 303, false);
    await edgeRule((method) => bound(signOutFile, method, "/console/auth/sign-out", {}), "POST", 0);
  });
});

describe("every route file", () => {
  it("exports every method Next would otherwise refuse with a 405 without Allow", () => {
    const root = path.resolve(import.meta.dirname, "..", "..");
    const files = (readdirSync(path.join(root, "app"), { recursive: true }) as string[]).filter((f) => f.endsWith("route.ts"));
    expect(files.length).toBeGreaterThan(40);
    for (const file of files) {
      const source = readFileSync(path.join(root, "app", file), "utf8");
      if (source.includes("export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = ")) continue;
      // The issuer's catch-all of unknown paths: the generic 404 for every method, HEAD and OPTIONS as Next implements them (204 with Allow).
      for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) expect(source, `${file} ${method}`).toContain(` as ${method}`);
    }
  });
});
