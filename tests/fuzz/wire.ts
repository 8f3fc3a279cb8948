/**
 * A raw HTTP/1.1 client over `net`: the request line, headers and body are written byte for byte
 * as given (latin1 strings are bytes), so requests carry what `fetch` and `http.request` refuse to
 * send: any method token, NUL and invalid UTF-8 in the target and the body, duplicated headers,
 * a chunked body. One connection per request (`Connection: close`); the answer is read to the end.
 */
import { connect } from "node:net";

export interface WireRequest {
  method: string;
  /** Request target as bytes (latin1). */
  target: string;
  /** Header lines in order, names and values as bytes (latin1); repeats are sent as repeats. */
  headers: [string, string][];
  body?: Buffer;
  /** Send the body with `Transfer-Encoding: chunked` instead of `Content-Length`. */
  chunked?: boolean;
}

export interface WireAnswer {
  status: number;
  /** Lower-case names; repeated headers keep every value. */
  headers: Map<string, string[]>;
  body: Buffer;
}

export type WireResult = { ok: true; answer: WireAnswer } | { ok: false; error: string };

export function serialize(request: WireRequest, host: string): Buffer {
  const lines = [`${request.method} ${request.target} HTTP/1.1`, `Host: ${host}`, "Connection: close"];
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  const body = request.body;
  if (body !== undefined) lines.push(request.chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${body.length}`);
  const head = Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
  if (body === undefined) return head;
  if (!request.chunked) return Buffer.concat([head, body]);
  const parts: Buffer[] = [head];
  for (let i = 0; i < body.length; i += 4096) {
    const chunk = body.subarray(i, i + 4096);
    parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`, "latin1"), chunk, Buffer.from("\r\n", "latin1"));
  }
  parts.push(Buffer.from("0\r\n\r\n", "latin1"));
  return Buffer.concat(parts);
}

function dechunk(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let i = 0;
  while (i < data.length) {
    const eol = data.indexOf("\r\n", i, "latin1");
    if (eol < 0) break;
    const size = parseInt(data.subarray(i, eol).toString("latin1").split(";")[0], 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(data.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

export function parseAnswer(data: Buffer, method: string): WireAnswer | null {
  // Interim answers (100 Continue to `Expect: 100-continue`) come first: skip them.
  while (/^HTTP\/1\.[01] 1\d\d /.test(data.subarray(0, 16).toString("latin1"))) {
    const interim = data.indexOf("\r\n\r\n", 0, "latin1");
    if (interim < 0) return null;
    data = data.subarray(interim + 4);
  }
  const end = data.indexOf("\r\n\r\n", 0, "latin1");
  if (end < 0) return null;
  const [statusLine, ...lines] = data.subarray(0, end).toString("latin1").split("\r\n");
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!match) return null;
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  let body = data.subarray(end + 4);
  if (method === "HEAD") body = Buffer.alloc(0);
  else if (headers.get("transfer-encoding")?.some((v) => /chunked/i.test(v))) body = dechunk(body);
  else if (headers.has("content-length")) body = body.subarray(0, Number(headers.get("content-length")![0]));
  return { status: Number(match[1]), headers, body };
}

/** Sends one request and reads the answer; an error when no complete answer head arrives in time. */
export function send(port: number, request: WireRequest, host: string, timeoutMs = 20_000): Promise<WireResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, "127.0.0.1");
    let settled = false;
    const finish = (reason?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const answer = parseAnswer(Buffer.concat(chunks), request.method);
      resolve(answer ? { ok: true, answer } : { ok: false, error: reason ?? "connection closed without an answer" });
    };
    const timer = setTimeout(() => finish(`no answer within ${timeoutMs} ms`), timeoutMs);
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("end", () => finish());
    socket.on("close", () => finish());
    // A server may answer (413) and close before the whole body is written: keep what arrived.
    socket.on("error", (e: NodeJS.ErrnoException) => finish(`socket error ${e.code ?? e.message}`));
    socket.write(serialize(request, host));
  });
}

export function header(answer: WireAnswer, name: string): string | undefined {
  return answer.headers.get(name)?.join(", ");
}
