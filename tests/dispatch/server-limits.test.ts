/**
 * The production HTTP server's limits (lib/server/node-server.ts `createNodeServer`): slow clients
 * are cut off at the configured timeouts (tiny here, so nothing waits long), one address cannot
 * hold more than its share of connections, and a graceful stop lets requests in flight finish.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { addressKey, ConnectionCap, createNodeServer, type NodeServer, type ServerLimits } from "../../lib/server/node-server";

const LIMITS: ServerLimits = { headersTimeoutMs: 300, requestTimeoutMs: 600, keepAliveTimeoutMs: 5000, connectionsPerAddress: 0 };

let running: NodeServer[] = [];
afterEach(async () => {
  for (const s of running) {
    s.server.closeAllConnections();
    await new Promise((resolve) => s.server.close(resolve));
  }
  running = [];
});

async function start(limits: Partial<ServerLimits> = {}, handler?: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ node: NodeServer; port: number }> {
  const node = createNodeServer(handler ?? ((_req, res) => res.end("ok")), { ...LIMITS, ...limits });
  running.push(node);
  await new Promise<void>((resolve) => node.server.listen(0, "127.0.0.1", resolve));
  return { node, port: (node.server.address() as net.AddressInfo).port };
}

/** A raw connection; resolves with everything the server sent and how long it kept the socket open. */
function connect(port: number, options: { localAddress?: string } = {}): Promise<{ socket: net.Socket; closed: Promise<{ data: string; afterMs: number }> }> {
  return new Promise((resolve, reject) => {
    const opened = Date.now();
    const socket = net.connect({ port, host: "127.0.0.1", localAddress: options.localAddress });
    let data = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk) => (data += chunk));
    const closed = new Promise<{ data: string; afterMs: number }>((done) => socket.on("close", () => done({ data, afterMs: Date.now() - opened })));
    socket.on("error", () => {});
    socket.once("connect", () => resolve({ socket, closed }));
    socket.once("error", reject);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("slow clients", () => {
  it("cuts off a client that trickles its request head, at the head timeout (408), not Node's 60 s", async () => {
    const { port } = await start();
    const { socket, closed } = await connect(port);
    socket.write("GET / HTTP/1.1\r\nHost: x\r\n");
    // One header byte at a time, never finishing the head.
    const drip = setInterval(() => socket.writable && socket.write("X"), 50);
    const { data, afterMs } = await closed;
    clearInterval(drip);
    expect(data).toMatch(/^HTTP\/1\.1 408 /);
    expect(afterMs).toBeLessThan(2000);
  });

  it("cuts off a connection that never sends anything", async () => {
    const { port } = await start();
    const { closed } = await connect(port);
    const { afterMs } = await closed;
    expect(afterMs).toBeLessThan(2000);
  });

  it("cuts off a client that sends the head but trickles the body, at the request timeout", async () => {
    let reached = false;
    const { port } = await start({}, (req, res) => {
      reached = true;
      req.resume();
      req.on("end", () => res.end("ok"));
    });
    const { socket, closed } = await connect(port);
    socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n");
    const drip = setInterval(() => socket.writable && socket.write("a"), 50);
    const { data, afterMs } = await closed;
    clearInterval(drip);
    expect(reached).toBe(true);
    expect(data).toMatch(/^HTTP\/1\.1 408 /);
    expect(afterMs).toBeLessThan(3000);
  });

  it("serves a client that sends its request in time", async () => {
    const { port } = await start();
    const { socket, closed } = await connect(port);
    socket.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect((await closed).data).toMatch(/^HTTP\/1\.1 200 [\s\S]*ok$/);
  });
});

describe("connections per address", () => {
  it("keys IPv4 addresses as they are, IPv4-mapped IPv6 as IPv4, and IPv6 by its /64", () => {
    expect(addressKey("203.0.113.7")).toBe("203.0.113.7");
    expect(addressKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(addressKey("2001:db8:1:2:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:0db8:0001:0002::1")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
    expect(addressKey(undefined)).toBe("unknown");
  });

  it("admits up to the cap per address, refuses the next, lets other addresses in, and frees a slot on close", () => {
    const cap = new ConnectionCap(3);
    const attacker = addressKey("2001:db8:1:2::1");
    for (let i = 0; i < 3; i++) expect(cap.admit(attacker)).toBe(true);
    expect(cap.admit(attacker)).toBe(false);
    // Another address in the same /64 is the same subscriber.
    expect(cap.admit(addressKey("2001:db8:1:2::ffff"))).toBe(false);
    expect(cap.admit(addressKey("2001:db8:1:3::1"))).toBe(true);
    expect(cap.admit("198.51.100.1")).toBe(true);
    cap.release(attacker);
    expect(cap.admit(attacker)).toBe(true);
    // Entries go away with their last connection: the table is bounded by the open connections.
    for (let i = 0; i < 3; i++) cap.release(attacker);
    cap.release("198.51.100.1");
    cap.release(addressKey("2001:db8:1:3::1"));
    expect(cap.addresses).toBe(0);
  });

  it("0 disables the cap", () => {
    const cap = new ConnectionCap(0);
    for (let i = 0; i < 10_000; i++) expect(cap.admit("192.0.2.1")).toBe(true);
    expect(cap.addresses).toBe(0);
  });

  it("on real sockets: the third connection from 127.0.0.1 is closed unanswered while 127.0.0.2 still gets in", async () => {
    const { port } = await start({ connectionsPerAddress: 2, headersTimeoutMs: 5000, requestTimeoutMs: 5000 });
    const held = [await connect(port), await connect(port)];
    const refused = await connect(port);
    refused.socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    const outcome = await refused.closed;
    expect(outcome.data).toBe("");
    expect(outcome.afterMs).toBeLessThan(1000);

    // Linux routes all of 127.0.0.0/8 to loopback: a second client address on one machine.
    const other = await connect(port, { localAddress: "127.0.0.2" });
    other.socket.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect((await other.closed).data).toMatch(/^HTTP\/1\.1 200 /);

    // A held connection still works, and once one closes a new one from 127.0.0.1 is admitted.
    held[0].socket.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect((await held[0].closed).data).toMatch(/^HTTP\/1\.1 200 /);
    await sleep(20);
    const again = await connect(port);
    again.socket.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect((await again.closed).data).toMatch(/^HTTP\/1\.1 200 /);
    held[1].socket.destroy();
  });
});

describe("graceful stop", () => {
  function get(port: number, agent: http.Agent): Promise<{ status: number; connection: string | undefined; body: string }> {
    return new Promise((resolve, reject) => {
      http
        .get({ host: "127.0.0.1", port, agent, path: "/" }, (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (c) => (body += c));
          res.on("end", () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
        })
        .on("error", reject);
    });
  }

  it("finishes the request in flight (with Connection: close), closes idle keep-alive connections, refuses new ones", async () => {
    let release = () => {};
    const { node, port } = await start({ keepAliveTimeoutMs: 60_000 }, (req, res) => {
      if (req.url === "/") release = () => res.end("slow done");
      else res.end("fast");
    });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    // An idle keep-alive connection from an earlier request.
    const idle = await connect(port);
    idle.socket.write("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n");
    await sleep(50);
    const inFlight = get(port, agent);
    await sleep(50);

    const started = Date.now();
    const stopped = node.stop(5000);
    // The idle connection is closed at once; the one in flight is not.
    expect((await idle.closed).data).toMatch(/fast$/);
    await expect(connect(port)).rejects.toThrow(/ECONNREFUSED/);

    release();
    const answer = await inFlight;
    expect(answer).toEqual({ status: 200, connection: "close", body: "slow done" });
    expect(await stopped).toEqual({ forced: false });
    // Nothing waited for the 60 s keep-alive timeout.
    expect(Date.now() - started).toBeLessThan(2000);
    agent.destroy();
  });

  it("cuts a request still open when the bound is reached", async () => {
    const { node, port } = await start({}, () => {
      // Never answers.
    });
    const { socket, closed } = await connect(port);
    socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await sleep(50);
    const started = Date.now();
    expect(await node.stop(300)).toEqual({ forced: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    await closed;
  });
});
