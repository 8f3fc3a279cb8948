/**
 * The production listener (lib/server/node-server.ts) answers a password sign-in post itself when
 * its client address has its share of password work in progress: the 429 refusal, without handing
 * the post to Next, whose cost per request is what a flood of such posts makes everyone wait
 * behind. Other posts, and the same post once the share is free, still go to Next. Runs the real
 * listener on loopback with a stand-in for Next that records what reaches it.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRequestListener } from "../../lib/server/node-server";
import { hashingQueueState, PER_ADDRESS_LIMIT, verifyPassword } from "../../lib/authn/password";
import { createHarness, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { standardWorkspace } from "../helpers/fixtures";
import { holdHashing, stopHolding } from "../helpers/hashing";

const ws = uniqueWorkspaceId("pw-flood");
let h: Harness;
let server: http.Server;
let port = 0;
const reachedNext: string[] = [];
/** Refusals the listener is holding; `autoRelease` answers them at once (the first test). */
const heldRefusals: (() => void)[] = [];
let autoRelease = true;
const holdRefusal = () => new Promise<void>((resolve) => (autoRelease ? resolve() : heldRefusals.push(resolve)));

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
  const next = (req: http.IncomingMessage, res: http.ServerResponse) => {
    reachedNext.push(`${req.method} ${req.url}`);
    res.writeHead(200, { "content-type": "text/html" }).end("<p>next</p>");
  };
  server = http.createServer(createRequestListener(h.service, PUBLIC_URL, next, { holdRefusal }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function post(path: string, agent: http.Agent | false = false, to = port, headers: http.OutgoingHttpHeaders = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const body = "tx=t&csrf=c&email=nobody%40example.test&password=x";
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port: to, method: "POST", path, agent, headers: { host: new URL(PUBLIC_URL).host, "content-type": "application/x-www-form-urlencoded", "content-length": Buffer.byteLength(body), origin: PUBLIC_URL, ...headers } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("a password sign-in post past its address's share", () => {
  it("is refused by the listener itself, 429 with Retry-After; other posts and a free share go to Next", async () => {
    const work = holdHashing();
    // The loopback address's share, in use (the listener stamps the socket's address).
    const held = Array.from({ length: PER_ADDRESS_LIMIT }, (_, i) => verifyPassword("not a hash", `held-${i}`, "127.0.0.1"));
    expect(hashingQueueState().held["127.0.0.1"]).toBe(PER_ADDRESS_LIMIT);

    const refused = await post(`/t/${ws}/sign-in/password`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(refused.headers["content-type"]).toContain("text/html");
    // Refused unread, on one kept-alive connection: the next post on it is read and answered as well.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    expect((await post(`/t/${ws}/sign-in/password`, agent)).status).toBe(429);
    expect((await post(`/t/${ws}/sign-in/password`, agent)).status).toBe(429);
    expect(await post(`/t/${ws}/sign-in/email`, agent)).toMatchObject({ status: 200, body: "<p>next</p>" });
    agent.destroy();
    expect(reachedNext).toEqual([`POST /t/${ws}/sign-in/email`]);

    work.releaseAll();
    await Promise.all(held);
    stopHolding();
    expect(await post(`/t/${ws}/sign-in/password`)).toMatchObject({ status: 200, body: "<p>next</p>" });
    expect(reachedNext).toEqual([`POST /t/${ws}/sign-in/email`, `POST /t/${ws}/sign-in/password`]);
  });

  it("is answered only after the hold, so a client reposting at once cannot turn refusals into a flood", async () => {
    const work = holdHashing();
    const held = Array.from({ length: PER_ADDRESS_LIMIT }, (_, i) => verifyPassword("not a hash", `held-${i}`, "127.0.0.1"));
    autoRelease = false;
    let answered = false;
    const refused = post(`/t/${ws}/sign-in/password`).then((r) => ((answered = true), r));
    await expect.poll(() => heldRefusals.length).toBe(1);
    // Held: a round trip on another connection comes back while the refusal is still unanswered.
    expect((await post(`/t/${ws}/sign-in/email`)).status).toBe(200);
    expect(answered).toBe(false);
    heldRefusals.shift()!();
    expect((await refused).status).toBe(429);
    autoRelease = true;
    work.releaseAll();
    await Promise.all(held);
    stopHolding();
  });
});

describe("behind a trusted proxy, a password sign-in post from an IPv6 /64 past its share", () => {
  let proxied: http.Server;
  let proxiedPort = 0;
  const reached: string[] = [];

  beforeAll(async () => {
    const p = await createHarness({ trustProxy: true });
    await seed(p, standardWorkspace(ws));
    const next = (req: http.IncomingMessage, res: http.ServerResponse) => {
      reached.push(`${req.method} ${req.url} ${req.headers["x-forwarded-for"]}`);
      res.writeHead(200, { "content-type": "text/html" }).end("<p>next</p>");
    };
    proxied = http.createServer(createRequestListener(p.service, PUBLIC_URL, next, { holdRefusal: () => Promise.resolve() }));
    await new Promise<void>((resolve) => proxied.listen(0, "127.0.0.1", resolve));
    proxiedPort = (proxied.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => proxied.close(() => resolve())));

  const from = (address: string) => post(`/t/${ws}/sign-in/password`, false, proxiedPort, { "x-forwarded-for": `${address}, 10.0.0.1` });

  it("is refused by the listener for every address of the /64 (X-Forwarded-For), while another /64 and an IPv4 client go to Next", async () => {
    const work = holdHashing();
    const held = Array.from({ length: PER_ADDRESS_LIMIT }, (_, i) => verifyPassword("not a hash", `held-${i}`, `2001:db8:66:1::${i + 1}`));
    expect(hashingQueueState().held["2001:db8:66:1::/64"]).toBe(PER_ADDRESS_LIMIT);

    // 64 addresses of the /64, none of which has sent anything before: one share among them.
    const answers = await Promise.all(Array.from({ length: 64 }, (_, i) => from(`2001:db8:66:1::${100 + i}`)));
    expect(answers.map((a) => a.status)).toEqual(Array(64).fill(429));
    expect(Number(answers[0].headers["retry-after"])).toBeGreaterThan(0);
    expect(reached).toEqual([]);

    expect(await from("2001:db8:66:2::1")).toMatchObject({ status: 200, body: "<p>next</p>" });
    expect(await from("203.0.113.9")).toMatchObject({ status: 200, body: "<p>next</p>" });
    expect(reached).toEqual([`POST /t/${ws}/sign-in/password 2001:db8:66:2::1, 10.0.0.1`, `POST /t/${ws}/sign-in/password 203.0.113.9, 10.0.0.1`]);

    work.releaseAll();
    await Promise.all(held);
    stopHolding();
    expect((await from("2001:db8:66:1::100")).status).toBe(200);
  });
});
