/**
 * A `Request` over Node's `IncomingMessage` for the production listener's direct path, built for
 * what the machine-facing endpoints read: `method`, `url`, `headers.get/has` and a small body read
 * before the endpoint runs. undici's `Request` constructor copies and validates every header into
 * a `Headers` list and creates an `AbortSignal` and a body stream per request, which cost more
 * than most endpoints' own work. Everything else a `Request` offers (`body` as a stream, `signal`,
 * `clone()`, `formData()`, …) is answered by a real `Request` built on first use, so to any
 * caller this is a `Request` (`instanceof Request` holds).
 */
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { Readable } from "node:stream";

/** `Headers` over Node's parsed header object: names are already lower case, repeats already joined. */
class NodeHeaders {
  readonly #raw: IncomingHttpHeaders;

  constructor(raw: IncomingHttpHeaders) {
    this.#raw = raw;
  }

  get(name: string): string | null {
    const value = this.#raw[name.toLowerCase()];
    if (value === undefined) return null;
    return typeof value === "string" ? value : value.join(", ");
  }
  has(name: string): boolean {
    return this.#raw[name.toLowerCase()] !== undefined;
  }
  set(name: string, value: string): void {
    this.#raw[name.toLowerCase()] = String(value);
  }
  append(name: string, value: string): void {
    const key = name.toLowerCase();
    const current = this.get(key);
    this.#raw[key] = current === null ? String(value) : `${current}, ${value}`;
  }
  delete(name: string): void {
    delete this.#raw[name.toLowerCase()];
  }
  getSetCookie(): string[] {
    const value = this.#raw["set-cookie"];
    return value === undefined ? [] : Array.isArray(value) ? [...value] : [value];
  }
  *entries(): HeadersIterator<[string, string]> {
    // Sorted by name, as `Headers` iterates.
    for (const name of Object.keys(this.#raw).sort()) {
      const value = this.get(name);
      if (value !== null) yield [name, value];
    }
  }
  *keys(): HeadersIterator<string> {
    for (const [name] of this.entries()) yield name;
  }
  *values(): HeadersIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }
  forEach(callback: (value: string, name: string, parent: Headers) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this as unknown as Headers);
  }
  [Symbol.iterator](): HeadersIterator<[string, string]> {
    return this.entries();
  }
}
Object.setPrototypeOf(NodeHeaders.prototype, Headers.prototype);

/** Request properties that need undici's own object; answered by a real `Request` built on first use. */
const DELEGATED_PROPERTIES = [
  "body", "bodyUsed", "cache", "credentials", "destination", "integrity", "keepalive", "mode", "redirect",
  "referrer", "referrerPolicy", "signal", "duplex",
] as const;
const DELEGATED_METHODS = ["blob", "clone", "formData"] as const;

class NodeRequest {
  readonly #incoming: IncomingMessage;
  readonly #url: string;
  readonly #body: Buffer | undefined;
  readonly #headers: NodeHeaders;
  #real: Request | null = null;

  constructor(incoming: IncomingMessage, url: string, body: Buffer | undefined) {
    this.#incoming = incoming;
    this.#url = url;
    this.#body = body;
    this.#headers = new NodeHeaders(incoming.headers);
  }

  get method(): string {
    return this.#incoming.method ?? "GET";
  }
  get url(): string {
    return this.#url;
  }
  get headers(): Headers {
    return this.#headers as unknown as Headers;
  }

  /** The undici `Request` for everything this object does not answer itself. */
  web(): Request {
    if (this.#real) return this.#real;
    const method = this.method;
    const headers = new Headers();
    for (const [name, value] of this.#headers.entries()) headers.append(name, value);
    if (method === "GET" || method === "HEAD") this.#real = new Request(this.#url, { method, headers });
    else if (this.#body !== undefined) this.#real = new Request(this.#url, { method, headers, body: this.#body as unknown as BodyInit });
    else {
      this.#real = new Request(this.#url, {
        method,
        headers,
        body: Readable.toWeb(this.#incoming) as ReadableStream,
        // @ts-expect-error duplex is required by Node for streamed request bodies
        duplex: "half",
      });
    }
    return this.#real;
  }

  // The body, when it was read before the endpoint ran: answered without a stream.
  arrayBuffer(): Promise<ArrayBuffer> {
    if (this.#body === undefined || this.#real) return this.web().arrayBuffer();
    const { buffer, byteOffset, byteLength } = this.#body;
    return Promise.resolve(buffer.slice(byteOffset, byteOffset + byteLength) as ArrayBuffer);
  }
  bytes(): Promise<Uint8Array> {
    if (this.#body === undefined || this.#real) return this.web().bytes();
    return Promise.resolve(new Uint8Array(this.#body));
  }
  text(): Promise<string> {
    if (this.#body === undefined || this.#real) return this.web().text();
    return Promise.resolve(this.#body.toString("utf8"));
  }
  json(): Promise<unknown> {
    if (this.#body === undefined || this.#real) return this.web().json();
    const body = this.#body;
    return new Promise((resolve) => resolve(JSON.parse(body.toString("utf8"))));
  }
}
for (const name of DELEGATED_PROPERTIES) {
  Object.defineProperty(NodeRequest.prototype, name, {
    get(this: NodeRequest) {
      return (this.web() as unknown as Record<string, unknown>)[name];
    },
  });
}
for (const name of DELEGATED_METHODS) {
  Object.defineProperty(NodeRequest.prototype, name, {
    value(this: NodeRequest, ...args: unknown[]) {
      const real = this.web() as unknown as Record<string, (...a: unknown[]) => unknown>;
      return real[name](...args);
    },
  });
}
Object.setPrototypeOf(NodeRequest.prototype, Request.prototype);

/**
 * The `Request` for a Node request: `url` is `origin` plus the request target; `body`, when given,
 * is the whole body, already read.
 */
export function nodeRequest(incoming: IncomingMessage, origin: string, body?: Buffer): Request {
  return new NodeRequest(incoming, origin + (incoming.url ?? "/"), body) as unknown as Request;
}

