import { createServer, request as httpRequest, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeRequest } from "./node-request";

/** Each request is handed to `inspect` as a NodeRequest (with its body read first when `buffer`); its answer is sent back as JSON. */
let inspect: (request: Request) => Promise<unknown>;
let buffer = true;
const server = createServer((req: IncomingMessage, res) => {
  const chunks: Buffer[] = [];
  const run = (body?: Buffer) =>
    inspect(nodeRequest(req, "https://issuer.test", body)).then(
      (value) => res.end(JSON.stringify({ value })),
      (error: Error) => res.end(JSON.stringify({ error: error.message })),
    );
  if (!buffer || req.method === "GET") return void run();
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => void run(Buffer.concat(chunks)));
});
let port = 0;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function send(method: string, path: string, headers: Record<string, string | string[]>, body?: string): Promise<{ value?: unknown; error?: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method, path, headers }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve(JSON.parse(text)));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("Requests over Node's IncomingMessage", () => {
  it("answer method, url and headers like a Request (case-insensitive, absent is null)", async () => {
    inspect = async (r) => [r instanceof Request, r.method, r.url, r.headers.get("Authorization"), r.headers.has("x-absent"), r.headers.get("x-absent"), r.headers.get("accept")];
    const { value } = await send("GET", "/t/ws/oidc/session?x=1", { authorization: "Bearer abc", accept: ["a", "b"] });
    expect(value).toEqual([true, "GET", "https://issuer.test/t/ws/oidc/session?x=1", "Bearer abc", false, null, "a, b"]);
  });

  it("iterate headers sorted by name, as Headers does", async () => {
    inspect = async (r) => [...r.headers].filter(([n]) => n.startsWith("x-"));
    const { value } = await send("GET", "/", { "x-b": "2", "x-a": "1" });
    expect(value).toEqual([["x-a", "1"], ["x-b", "2"]]);
  });

  it("read a body read beforehand with text(), json() and arrayBuffer(), repeatedly", async () => {
    inspect = async (r) => [await r.text(), await r.json(), new TextDecoder().decode(await r.arrayBuffer())];
    const { value } = await send("POST", "/", { "content-type": "application/json" }, '{"k":"é"}');
    expect(value).toEqual(['{"k":"é"}', { k: "é" }, '{"k":"é"}']);
  });

  it("stream a body that was not read beforehand, through a real Request", async () => {
    buffer = false;
    try {
      inspect = async (r) => {
        const reader = r.body!.getReader();
        let text = "";
        for (let c = await reader.read(); !c.done; c = await reader.read()) text += new TextDecoder().decode(c.value);
        return [text, r.signal instanceof AbortSignal];
      };
      const { value } = await send("POST", "/", { "transfer-encoding": "chunked" }, "a=1&b=2");
      expect(value).toEqual(["a=1&b=2", true]);
    } finally {
      buffer = true;
    }
  });

  it("clone into a real Request with the same method, url, headers and body", async () => {
    inspect = async (r) => {
      const copy = r.clone();
      return [copy.method, copy.url, copy.headers.get("content-type"), await copy.text()];
    };
    const { value } = await send("POST", "/p", { "content-type": "text/plain" }, "body");
    expect(value).toEqual(["POST", "https://issuer.test/p", "text/plain", "body"]);
  });
});
