/**
 * A refused upstream on the production listener (lib/server/node-server.ts, as server.ts runs it
 * over the build): the custom server creates the service, and with it the outbound fetch, from
 * its own copy of lib/outbound, while the federation routes (not machine-facing) are answered by
 * Next's route bundle, which carries another copy. A sign-in through an issuer on a loopback
 * address still ends on "Sign-in option not set up" (never "Sign-in provider unavailable"), the
 * upstream never hears of it, and the server's log has the reason under the answer's request id.
 *
 * Needs the production build (.next), as tests/dispatch/equivalence.test.ts.
 */
import http from "node:http";
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDualServer, type DualServer } from "./start-dual-server";

const root = path.resolve(import.meta.dirname, "..", "..");
const built = existsSync(path.join(root, ".next", "BUILD_ID"));
const ci = !!process.env.CI && process.env.CI !== "0" && process.env.CI !== "false";

const PUBLIC_URL = "https://auth.refused.test";
const WS = `refused-${randomBytes(4).toString("hex")}`;
const SPA = { id: "spa", redirect: "https://app.refused.test/callback" };

let server: DualServer | undefined;
let port: number;
let upstream: http.Server;
const seen: string[] = [];

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function send(method: string, target: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(body);
    const req = http.request(
      { host: "127.0.0.1", port, method, path: target, agent: false, headers: { host: new URL(PUBLIC_URL).host, ...(payload ? { "content-length": String(payload.length) } : {}), ...headers } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

const cookieOf = (answer: Answer) => (answer.headers["set-cookie"] ?? []).map((c) => c.split(";")[0]).join("; ");

describe.runIf(built || ci)("a refused upstream on the production listener", () => {
  beforeAll(async () => {
    if (!built) throw new Error("No production build (.next/BUILD_ID): run `npm run build` first (npm test does).");
    upstream = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const issuer = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const workspace = {
      id: WS,
      name: "Refused upstream",
      social_providers: [{ key: "internal", preset: "oidc", name: "Internal ID", client_id: "internal-client", client_secret: { env: "REFUSED_UPSTREAM_SECRET" }, issuer }],
      applications: [{ client_id: SPA.id, name: "SPA", type: "PUBLIC", redirect_uris: [SPA.redirect], social_providers: ["internal"] }],
    };
    server = await startDualServer({
      PUBLIC_URL,
      LOG_FORMAT: "pretty",
      DISPATCH_WORKSPACE: JSON.stringify(workspace),
      REFUSED_UPSTREAM_SECRET: randomBytes(24).toString("hex"),
      ALLOW_PRIVATE_UPSTREAMS: undefined,
      UPSTREAM_ALLOW: undefined,
    });
    port = server.ports.direct;
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
  });

  it("ends on 'Sign-in option not set up' with its code, and logs the refused address under the request id", async () => {
    const verifier = randomBytes(32).toString("base64url");
    const query = new URLSearchParams({
      client_id: SPA.id,
      redirect_uri: SPA.redirect,
      response_type: "code",
      scope: "openid",
      state: randomBytes(24).toString("base64url"),
      nonce: randomBytes(24).toString("base64url"),
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
    });
    const authorize = await send("GET", `/t/${WS}/oauth2/authorize?${query}`);
    expect(authorize.status).toBe(303);
    const location = new URL(authorize.headers.location!, PUBLIC_URL);
    const cookie = cookieOf(authorize);
    const page = await send("GET", location.pathname + location.search, { cookie });
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1];
    expect(csrf, "the hosted sign-in form").toBeTruthy();
    const form = new URLSearchParams({ tx: location.searchParams.get("tx")!, csrf: csrf!, provider: "internal" }).toString();
    const res = await send("POST", `/t/${WS}/sign-in/federation`, { cookie, origin: PUBLIC_URL, "content-type": "application/x-www-form-urlencoded" }, form);
    expect(res.status).toBe(502);
    expect(res.body).toContain("<h1>Sign-in option not set up</h1>");
    expect(res.body).toContain("This sign-in option is not set up correctly.");
    expect(res.body).toContain("server_error");
    expect(res.body).not.toContain("Sign-in provider unavailable");
    expect(seen).toEqual([]);
    const requestId = String(res.headers["x-request-id"]);
    await expect.poll(() => server!.stderr(), { timeout: 5000 }).toContain(`(request ${requestId})`);
    const line = server!.stderr().split("\n").find((l) => l.includes(`(request ${requestId})`))!;
    expect(line).toBe(`[latchkey] federated sign-in at ${WS}: upstream refused (request ${requestId}): Requests to 127.0.0.1 are refused: a loopback address is not a public one, and UPSTREAM_ALLOW does not list it`);
  });
});
