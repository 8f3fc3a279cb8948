/**
 * Methods at the edge of the production listener (lib/http/node-server.ts): HEAD is answered
 * wherever GET is, with GET's status and headers and no body; methods the application does not
 * serve (TRACE and the like) are answered before Next, 405 with Allow on the route table's paths
 * and 501 elsewhere, never handed to Next. Runs the real listener on loopback with a stand-in for
 * Next that records what reaches it.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRequestListener } from "../../lib/http/node-server";
import { createHarness, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { standardWorkspace } from "../helpers/fixtures";

const ws = uniqueWorkspaceId("methods");
let h: Harness;
let server: http.Server;
let port = 0;
const reachedNext: string[] = [];

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
  const next = (req: http.IncomingMessage, res: http.ServerResponse) => {
    reachedNext.push(`${req.method} ${req.url}`);
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

/** Raw requests: fetch() refuses TRACE and CONNECT-style methods. */
function send(method: string, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

const withoutDate = (headers: http.IncomingHttpHeaders) => {
  const { date: _date, ...rest } = headers;
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
