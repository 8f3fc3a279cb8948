/**
 * Methods at the edge of the production listener (lib/server/node-server.ts): HEAD is answered
 * wherever GET is, with GET's status and headers and no body; methods the application does not
 * serve (TRACE and the like) are answered before Next, 405 with Allow on the route table's paths
 * and 501 elsewhere, never handed to Next. Runs the real listener on loopback with a stand-in for
 * Next that records what reaches it.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRequestListener, ISSUER_PATH_HEADERS } from "../../lib/server/node-server";
import { notFoundResponse } from "../../lib/oauth/errors";
import { createHarness, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { standardWorkspace } from "../helpers/fixtures";

const ws = uniqueWorkspaceId("methods");
let h: Harness;
let server: http.Server;
let port = 0;
const reachedNext: string[] = [];
const headersAtNext: http.IncomingHttpHeaders[] = [];

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
  const next = (req: http.IncomingMessage, res: http.ServerResponse) => {
    reachedNext.push(`${req.method} ${req.url}`);
    headersAtNext.push({ ...req.headers });
    res.writeHead(200, { "content-type": "text/html" }).end("<p>next</p>");
  };
  server = http.createServer(createRequestListener(h.service, PUBLIC_URL, next));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Raw requests: fetch() refuses TRACE and CONNECT-style methods. Sent to PUBLIC_URL's host, as a proxy in front of the listener would (any other host serves nothing). */
function send(method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path, headers: { host: new URL(PUBLIC_URL).host, ...headers }, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The headers that name the answer itself (its time, its request's id) left out, to compare two answers. */
const withoutDate = (headers: http.IncomingHttpHeaders) => {
  const { date: _date, "x-request-id": _id, ...rest } = headers;
  return rest;
};

describe("HEAD", () => {
  for (const path of ["/.well-known/openid-configuration", "/.well-known/jwks.json"]) {
    it(`answers HEAD ${path} with GET's status and headers and no body`, async () => {
      const get = await send("GET", `/t/${ws}${path}`);
      const head = await send("HEAD", `/t/${ws}${path}`);
      expect(get.status).toBe(200);
      expect(head.status).toBe(200);
      expect(head.body).toBe("");
      expect(withoutDate(head.headers)).toEqual(withoutDate(get.headers));
      expect(Number(head.headers["content-length"])).toBe(Buffer.byteLength(get.body));
    });
  }

  it("answers HEAD on the other GET endpoints as GET does (401 without a token)", async () => {
    for (const path of ["/oidc/userinfo", "/oidc/session"]) {
      const get = await send("GET", `/t/${ws}${path}`);
      const head = await send("HEAD", `/t/${ws}${path}`);
      expect(head.status).toBe(get.status);
      expect(head.headers["www-authenticate"]).toBe(get.headers["www-authenticate"]);
      expect(head.body).toBe("");
    }
  });

  it("lists HEAD beside GET in Allow, and a POST-only path answers HEAD with 405", async () => {
    const post = await send("POST", `/t/${ws}/oidc/session`);
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe("GET, HEAD");
    const head = await send("HEAD", `/t/${ws}/oauth2/token`);
    expect(head.status).toBe(405);
    expect(head.headers.allow).toBe("POST");
  });

  it("hands HEAD on a page to Next, which serves it like GET", async () => {
    reachedNext.length = 0;
    await send("HEAD", `/t/${ws}/sign-in`);
    expect(reachedNext).toEqual([`HEAD /t/${ws}/sign-in`]);
  });
});

describe("methods the application does not serve", () => {
  const pages = ["/", "/console", "/console/w/x", `/t/${ws}/sign-in`, `/t/${ws}/no-such-thing`, "/favicon.ico", "/_next/static/x.js"];
  for (const method of ["TRACE", "PROPFIND", "MKCOL", "LOCK", "SEARCH"]) {
    it(`answers ${method} on pages with 501 before Next`, async () => {
      reachedNext.length = 0;
      for (const path of pages) {
        const res = await send(method, path);
        expect(res.status, `${method} ${path}`).toBe(501);
        expect(res.headers["content-type"]).toContain("application/json");
        expect(res.headers["x-content-type-options"]).toBe("nosniff");
        expect(JSON.parse(res.body).error).toBe("invalid_request");
      }
      expect(reachedNext).toEqual([]);
    });
  }

  it("answers TRACE on the route table's paths with 405 and the methods they take", async () => {
    for (const [path, allow] of [
      ["/oauth2/token", "POST"],
      ["/oauth2/authorize", "GET, HEAD"],
      ["/oidc/logout", "GET, HEAD"],
      ["/sign-in/password", "POST"],
      ["/.well-known/jwks.json", "GET, HEAD"],
    ]) {
      const res = await send("TRACE", `/t/${ws}${path}`);
      expect(res.status, path).toBe(405);
      expect(res.headers.allow).toBe(allow);
    }
    // The reserved families fail closed as an unknown route, whatever the method.
    expect((await send("TRACE", `/t/${ws}/v1/access/x`)).status).toBe(404);
    expect(reachedNext).toEqual([]);
  });

  it("still hands the methods it serves to Next", async () => {
    reachedNext.length = 0;
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) await send(method, "/console");
    expect(reachedNext).toEqual(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"].map((m) => `${m} /console`));
  });
});

describe("requests Next would answer with a 500 or a redirect never reach it", () => {
  it("a path with a malformed percent escape: the generic 404 under an issuer, 400 elsewhere", async () => {
    reachedNext.length = 0;
    const generic = await notFoundResponse().json();
    for (const path of ["/t/%FF/oidc/session", "/t/%C3%28/oauth2/authorize", `/t/${ws}/%FF`, `/t/${ws}/sign-in/%FF`]) {
      const res = await send("GET", path);
      expect([path, res.status, JSON.parse(res.body)]).toEqual([path, 404, generic]);
    }
    expect((await send("POST", "/t/%FF/oauth2/token")).status).toBe(404);
    const outside = await send("GET", "/console/%FF");
    expect([outside.status, outside.headers["x-content-type-options"]]).toEqual([400, "nosniff"]);
    expect(reachedNext).toEqual([]);
  });

  it("a method other than GET and HEAD on the landing page, static files and the hosted sign-in page: 405 with Allow", async () => {
    reachedNext.length = 0;
    for (const [method, path, headers] of [
      ["POST", "/robots.txt", {}],
      ["OPTIONS", "/robots.txt", {}],
      ["POST", "/", { "content-type": "multipart/form-data; boundary=x" }],
      ["POST", "/", { "next-action": "x", origin: "" }],
      ["DELETE", "/_next/static/x.js", {}],
      ["POST", `/t/${ws}/sign-in`, { "next-action": "x", origin: "null" }],
      ["PUT", `/t/${ws}/sign-in`, {}],
    ] as const) {
      const res = await send(method, path, headers);
      expect([method, path, res.status, res.headers.allow]).toEqual([method, path, 405, "GET, HEAD"]);
    }
    expect(reachedNext).toEqual([]);
  });

  it("Next's image optimizer, which no page uses and which renders any path it is given: the generic 404 before Next", async () => {
    reachedNext.length = 0;
    const notFound = await send("GET", "/t/no-such-workspace/.well-known/openid-configuration");
    for (const path of ["/_next/image?url=%2Fconsole&w=64&q=75", "/_next/image?url=/t/x/sign-in&w=16&q=1", "/_next/image"]) {
      const res = await send("GET", path);
      expect([path, res.status, res.body]).toEqual([path, 404, notFound.body]);
    }
    expect(reachedNext).toEqual([]);
  });

  it("a console change goes to Next whatever its Origin: proxy.ts judges it (tests/dispatch/console-forms.test.ts)", async () => {
    reachedNext.length = 0;
    for (const origin of ["", "null", "not a url", "https://h.example/path"]) await send("POST", "/console/sign-in", { "next-action": "x", origin });
    await send("POST", "/console/auth/sign-out", { origin: "null", "sec-fetch-site": "same-origin" });
    expect(reachedNext).toEqual([...Array(4).fill("POST /console/sign-in"), "POST /console/auth/sign-out"]);
  });

  it("under an issuer, Next's navigation and action headers are removed before Next sees the request", async () => {
    headersAtNext.length = 0;
    const internal = { rsc: "1", "next-router-state-tree": "x", "next-router-prefetch": "1", "next-action": "x", "next-url": "/x" };
    await send("GET", `/t/${ws}/oauth2/authorize?client_id=x`, internal);
    await send("GET", `/t/${ws}/sign-in?tx=x`, internal);
    expect(headersAtNext).toHaveLength(2);
    for (const headers of headersAtNext) for (const name of Object.keys(internal)) expect(headers[name]).toBeUndefined();
    // Elsewhere (the console's own navigation) they pass.
    headersAtNext.length = 0;
    await send("GET", "/console", { rsc: "1" });
    expect(headersAtNext[0].rsc).toBe("1");
  });
});

describe("RFC 8414's metadata path, /.well-known/oauth-authorization-server/t/{workspace}", () => {
  const metadata = `/.well-known/oauth-authorization-server/t/${ws}`;

  it("is answered on the direct path, never by Next, as the issuer's discovery document with the issuer routes' headers", async () => {
    reachedNext.length = 0;
    for (const query of ["", "?client_id=spa", "?client_id=nope", "?x=1"]) {
      const direct = await send("GET", `${metadata}${query}`);
      const discovery = await send("GET", `/t/${ws}/.well-known/openid-configuration${query}`);
      expect({ ...direct, headers: withoutDate(direct.headers) }, query).toEqual({ ...discovery, headers: withoutDate(discovery.headers) });
    }
    const res = await send("GET", metadata);
    expect(res.status).toBe(200);
    for (const [name, value] of Object.entries(ISSUER_PATH_HEADERS)) expect(res.headers[name], name).toBe(value);
    expect(JSON.parse(res.body).issuer).toBe(`${PUBLIC_URL}/t/${ws}`);
    const unknown = await send("GET", "/.well-known/oauth-authorization-server/t/no-such-workspace");
    expect([unknown.status, unknown.headers["access-control-allow-origin"]]).toEqual([404, "*"]);
    expect(reachedNext).toEqual([]);
  });

  it("answers HEAD, a preflight, and 405 with Allow for other methods, before Next", async () => {
    reachedNext.length = 0;
    const head = await send("HEAD", metadata);
    expect([head.status, head.body]).toEqual([200, ""]);
    const preflight = await send("OPTIONS", metadata, { origin: "https://anywhere.example", "access-control-request-method": "GET" });
    expect([preflight.status, preflight.headers["access-control-allow-origin"]]).toEqual([204, "*"]);
    for (const method of ["POST", "DELETE", "TRACE"]) {
      const res = await send(method, metadata);
      expect([method, res.status, res.headers.allow]).toEqual([method, 405, "GET, HEAD"]);
    }
    expect(reachedNext).toEqual([]);
  });

  it("leaves every other path below /.well-known to Next, as before", async () => {
    reachedNext.length = 0;
    for (const path of [`${metadata}/`, `${metadata}/x`, "/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/t/UPPER"]) await send("GET", path);
    expect(reachedNext).toEqual([`GET ${metadata}/`, `GET ${metadata}/x`, "GET /.well-known/oauth-authorization-server", "GET /.well-known/oauth-authorization-server/t/UPPER"]);
  });
});

describe("X-Request-Id", () => {
  const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

  it("answers every request with an id of its own, after the one it came with when that is a short token; Next and the endpoints see the same", async () => {
    const given = await send("GET", `/t/${ws}/.well-known/openid-configuration`, { "x-request-id": "lb-7f3a:0001" });
    expect(given.headers["x-request-id"]).toMatch(new RegExp(`^lb-7f3a:0001~${UUID}$`));
    const fresh = await send("GET", `/t/${ws}/.well-known/openid-configuration`);
    expect(fresh.headers["x-request-id"]).toMatch(new RegExp(`^${UUID}$`));
    expect((await send("GET", `/t/${ws}/.well-known/openid-configuration`)).headers["x-request-id"]).not.toBe(fresh.headers["x-request-id"]);
    for (const bad of ["x".repeat(129), "two words", "a\u00e9b", "", "a~b"]) {
      const res = await send("GET", "/healthz", { "x-request-id": bad });
      expect(res.headers["x-request-id"]).toMatch(new RegExp(`^${UUID}$`));
    }
    headersAtNext.length = 0;
    const page = await send("GET", "/console", { "x-request-id": "page-1" });
    expect(page.headers["x-request-id"]).toMatch(new RegExp(`^page-1~${UUID}$`));
    expect(headersAtNext.at(-1)?.["x-request-id"]).toBe(page.headers["x-request-id"]);
  });

  it("is never another request's: an id sent again, or another answer's id sent back, still gets one of its own", async () => {
    const ids = new Set<string>();
    const first = (await send("GET", "/healthz")).headers["x-request-id"] as string;
    ids.add(first);
    for (let i = 0; i < 5; i++) {
      for (const sent of ["lb-7f3a:0001", first]) ids.add((await send("GET", `/t/${ws}/.well-known/openid-configuration`, { "x-request-id": sent })).headers["x-request-id"] as string);
    }
    expect(ids.size).toBe(11);
  });
});
