/**
 * A page Next rendered once, kept as a template: its bytes cut at every occurrence of the values
 * that differ per request (a transaction's id, its form token, the response's CSP nonce), so the
 * next request of the same shape is answered by putting its own values in, without a render.
 *
 * What may be kept is decided by the page's owner (lib/server/sign-in-page.ts): it renders from a
 * view it computed itself, keys the template by everything in that view but these values, and
 * names the values. The values must be random tokens of a fixed length: nothing else in a page can
 * equal them by chance, and a value of another length in their place would shift the byte counts
 * some of React's payload rows carry, so such a value is never filled in (`fillable`).
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { gunzipSync, gzipSync } from "node:zlib";

/** A response head or body cut at the values: text, value index, text, … (always one more text than values). */
interface Cut {
  readonly texts: readonly string[];
  readonly slots: readonly number[];
}

export interface PageTemplate {
  readonly status: number;
  readonly headers: ReadonlyArray<readonly [string, Cut]>;
  readonly body: Cut;
  /** Each value's length: another length is never filled in. */
  readonly lengths: readonly number[];
}

/** What a render answered: status, head and body (decoded), as Next wrote them. */
export interface CapturedPage {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

/** Headers that belong to one response (the listener's, Node's own framing), never to a template. */
const PER_RESPONSE = new Set(["x-request-id", "date", "connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"]);

/** The CSP nonce of a response built from a template: as proxy.ts makes one (18 random bytes, base64). */
export function pageNonce(): string {
  return randomBytes(18).toString("base64");
}

function cut(text: string, values: readonly string[]): Cut {
  const texts: string[] = [];
  const slots: number[] = [];
  let from = 0;
  for (;;) {
    let at = -1;
    let which = -1;
    for (let i = 0; i < values.length; i++) {
      const found = text.indexOf(values[i], from);
      if (found !== -1 && (at === -1 || found < at)) {
        at = found;
        which = i;
      }
    }
    if (at === -1) break;
    texts.push(text.slice(from, at));
    slots.push(which);
    from = at + values[which].length;
  }
  texts.push(text.slice(from));
  return { texts, slots };
}

function fill(c: Cut, values: readonly string[]): string {
  if (c.slots.length === 0) return c.texts[0];
  let out = c.texts[0];
  for (let i = 0; i < c.slots.length; i++) out += values[c.slots[i]] + c.texts[i + 1];
  return out;
}

/**
 * The template of a captured page whose per-request values were `values`, or null when the page
 * is not one to keep: not a 200 HTML page, a cookie set, or a value missing or not a fixed-width
 * token (each must occur in the body, and none may contain another).
 */
export function templateOf(page: CapturedPage, values: readonly string[]): PageTemplate | null {
  if (page.status !== 200) return null;
  if (!String(page.headers["content-type"] ?? "").startsWith("text/html")) return null;
  if (page.headers["set-cookie"] !== undefined) return null;
  if (values.some((v) => !/^[A-Za-z0-9_\-+/=]{16,}$/.test(v))) return null;
  if (values.some((v, i) => values.some((w, j) => i !== j && w.includes(v)))) return null;
  const text = page.body.toString("utf8");
  if (values.some((v) => !text.includes(v))) return null;
  const headers: Array<readonly [string, Cut]> = [];
  for (const [name, value] of Object.entries(page.headers)) {
    if (value === undefined || PER_RESPONSE.has(name)) continue;
    headers.push([name, cut(Array.isArray(value) ? value.join(", ") : String(value), values)]);
  }
  return { status: page.status, headers, body: cut(text, values), lengths: values.map((v) => v.length) };
}

/** Whether `values` can be put in `template` (each of the length the template was cut for). */
export function fillable(template: PageTemplate, values: readonly string[]): boolean {
  return values.length === template.lengths.length && values.every((v, i) => v.length === template.lengths[i]);
}

/** Whether the request takes a gzip body (as Next's compression decides: gzip named, not with q=0). */
function takesGzip(req: IncomingMessage): boolean {
  const field = req.headers["accept-encoding"];
  if (typeof field !== "string") return false;
  return field.split(",").some((part) => {
    const [coding, ...params] = part.trim().split(";");
    if (coding.trim().toLowerCase() !== "gzip" && coding.trim() !== "*") return false;
    return !params.some((p) => /^\s*q\s*=\s*0(\.0*)?\s*$/i.test(p));
  });
}

/** Answers the request (a GET) from `template` with `values`. */
export function sendTemplate(req: IncomingMessage, res: ServerResponse, template: PageTemplate, values: readonly string[]): void {
  const headers: Record<string, string> = {};
  for (const [name, c] of template.headers) headers[name] = fill(c, values);
  let body = Buffer.from(fill(template.body, values), "utf8");
  if (takesGzip(req)) {
    body = gzipSync(body);
    headers["content-encoding"] = "gzip";
  }
  headers["content-length"] = String(body.length);
  res.writeHead(template.status, headers);
  res.end(body);
}

/**
 * Lets `render` answer the request as usual, and hands what it wrote (head and decoded body) to
 * `done` once it ended; `done` gets null when the answer is not one to read (another encoding,
 * cut off). The client gets exactly what `render` wrote.
 */
export function capturePage(res: ServerResponse, done: (page: CapturedPage | null) => void): void {
  const chunks: Buffer[] = [];
  let head: { status: number; headers: OutgoingHttpHeaders } | null = null;
  const takeHead = () => (head ??= { status: res.statusCode, headers: { ...res.getHeaders() } });
  const original = { writeHead: res.writeHead, write: res.write, end: res.end };
  const keep = (chunk: unknown, encoding: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === "function") return;
    chunks.push(Buffer.isBuffer(chunk) ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk) : Buffer.from(String(chunk), typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8"));
  };
  res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse["writeHead"]>) {
    const out = original.writeHead.apply(this, args);
    // The head as sent: what was set before plus what writeHead was given.
    head = { status: res.statusCode, headers: { ...res.getHeaders(), ...headersOf(args) } };
    return out;
  } as ServerResponse["writeHead"];
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    takeHead();
    keep(chunk, rest[0]);
    return (original.write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as ServerResponse["write"];
  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    takeHead();
    keep(chunk, rest[0]);
    res.writeHead = original.writeHead;
    res.write = original.write;
    res.end = original.end;
    const out = (original.end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    done(decoded(head!, Buffer.concat(chunks)));
    return out;
  } as ServerResponse["end"];
}

/** The headers object writeHead was given (its second or third argument), lower-cased. */
function headersOf(args: unknown[]): OutgoingHttpHeaders {
  const given = args.find((a, i) => i > 0 && a !== null && typeof a === "object");
  const out: OutgoingHttpHeaders = {};
  if (Array.isArray(given)) {
    for (let i = 0; i + 1 < given.length; i += 2) out[String(given[i]).toLowerCase()] = given[i + 1] as string;
  } else if (given) {
    for (const [name, value] of Object.entries(given as Record<string, unknown>)) out[name.toLowerCase()] = value as string;
  }
  return out;
}

function decoded(head: { status: number; headers: OutgoingHttpHeaders }, bytes: Buffer): CapturedPage | null {
  const encoding = String(head.headers["content-encoding"] ?? "identity").toLowerCase();
  try {
    if (encoding === "gzip") return { ...head, body: gunzipSync(bytes) };
    if (encoding === "identity") return { ...head, body: bytes };
  } catch {
    // A cut-off or broken body: nothing to keep.
  }
  return null;
}
