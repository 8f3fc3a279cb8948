// The production server's request listener (server.ts): machine-facing endpoints are answered
// straight from the route table, everything else goes to Next. Shared with the dispatch-
// equivalence test (tests/dispatch), which runs this listener beside a Next-only one.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Service } from "../service";
import { CLIENT_ADDRESS_HEADER } from "./rate-limit";
import { nodeRequest } from "./node-request";
import { rawResponse } from "./response";
import { directDecision, runDecision, type Decision } from "./router";

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

/**
 * Request bodies of at most this many bytes (by Content-Length) are read before the endpoint
 * runs; every machine endpoint refuses far smaller bodies (8 KiB) with 413. Larger or unsized
 * bodies stay streamed, so the endpoint's own limit stops reading them early.
 */
const BUFFERED_BODY_LIMIT = 64 * 1024;

function readSmallBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/**
 * What next.config.ts `headers()` adds to every answer under /t/: the direct path sends the same,
 * so both paths answer alike (tests/dispatch checks it). Keep the two lists in step.
 */
export const ISSUER_PATH_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": "frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
};

export async function writeResponse(response: Response, res: ServerResponse, extraHeaders: Readonly<Record<string, string>> = {}): Promise<void> {
  const raw = rawResponse(response);
  if (raw) {
    // The hot path: a light response is written as it is, head and string body in one write.
    const headers: Record<string, string> = { ...extraHeaders, ...raw.headers };
    if (raw.body === null) {
      res.writeHead(raw.status, headers);
      res.end();
      return;
    }
    headers["content-length"] = String(Buffer.byteLength(raw.body));
    res.writeHead(raw.status, headers);
    res.end(raw.body);
    return;
  }
  const headers: Record<string, string | string[]> = { ...extraHeaders };
  let cookies = false;
  response.headers.forEach((value, name) => {
    if (name === "set-cookie") cookies = true;
    else headers[name] = value;
  });
  if (cookies) headers["set-cookie"] = response.headers.getSetCookie();
  if (!response.body) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  const body = Buffer.from(await response.arrayBuffer());
  headers["content-length"] = String(body.length);
  res.writeHead(response.status, headers);
  // As a latin1 string (byte for byte the same), Node sends head and body in one write instead
  // of a writev of two buffers: measurably cheaper on small answers.
  res.end(body.toString("latin1"), "latin1");
}

async function answerDirectly(req: IncomingMessage, res: ServerResponse, service: Service, origin: string, decision: Decision): Promise<void> {
  const method = req.method ?? "GET";
  let body: Buffer | undefined;
  if (method !== "GET" && method !== "HEAD") {
    const declared = req.headers["content-length"];
    if (declared !== undefined && Number(declared) <= BUFFERED_BODY_LIMIT && req.headers["transfer-encoding"] === undefined) body = await readSmallBody(req);
  }
  await writeResponse(await runDecision(decision, nodeRequest(req, origin, body), service), res, ISSUER_PATH_HEADERS);
}

/**
 * The listener: stamps the client address the limiter keys on (overwriting whatever a client
 * sent under that name), then answers machine-facing endpoints directly and hands the rest to
 * `next`. With `direct: false` every request goes to `next` (the equivalence test's Next side).
 */
export function createRequestListener(service: Service, origin: string, next: NodeHandler, options: { direct?: boolean } = {}) {
  const direct = options.direct ?? true;
  return (req: IncomingMessage, res: ServerResponse): void => {
    req.headers[CLIENT_ADDRESS_HEADER] = req.socket.remoteAddress ?? "unknown";
    const url = req.url ?? "/";
    const decision = direct && url.startsWith("/t/") ? directDecision(req.method ?? "GET", url) : null;
    if (!decision) {
      void next(req, res);
      return;
    }
    answerDirectly(req, res, service, origin, decision).catch((error) => {
      console.error("[latchkey] dispatch failed:", error);
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end('{"error":"server_error"}');
    });
  };
}
