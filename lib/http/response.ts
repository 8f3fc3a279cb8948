/**
 * A `Response` for the machine-facing endpoints' small JSON (or empty) answers that costs almost
 * nothing to build: status, a plain header record and a string body. undici's `Response` builds a
 * `Headers` list, an `AbortSignal`-free but still stream-backed body and a `ReadableStream` per
 * answer, and reading it back costs as much again; on the hot paths that was a fifth of the
 * server's CPU per request. This object is a `Response` to every caller (`instanceof Response`,
 * `status`, `headers`, `text()`, `json()`, …): the parts that need undici's machinery (`body` as a
 * stream, `blob()`, `formData()`) are answered by a real `Response` built on first use. The
 * production listener writes it straight to the socket (`rawResponse`), and the Next adapter
 * converts it (`toWebResponse`) before handing it to Next.
 */

type HeaderRecord = Record<string, string>;

export interface RawResponse {
  status: number;
  /** Lower-case names; values as `Headers` would join them. */
  headers: HeaderRecord;
  body: string | null;
}

const encoder = new TextEncoder();

class LightResponse {
  #status: number;
  #body: string | null;
  /** The headers while no caller has asked for a `Headers` object; then null, and #headers holds them. */
  #record: HeaderRecord | null;
  #headers: Headers | null = null;
  #real: Response | null = null;

  constructor(body: string | null, status: number, headers: HeaderRecord) {
    this.#body = body;
    this.#status = status;
    this.#record = headers;
  }

  /** The answer as status, header record and body; null when a caller added a `Set-Cookie` (write it as a `Response`). */
  raw(): RawResponse | null {
    if (this.#headers?.has("set-cookie")) return null;
    const headers = this.#headers ? recordOf(this.#headers) : (this.#record as HeaderRecord);
    return { status: this.#status, headers, body: this.#body };
  }

  /** A new undici `Response` with this status, these headers and this body. */
  toWeb(): Response {
    return new Response(this.#body, { status: this.#status, headers: this.#headers ?? this.#record ?? undefined });
  }

  #web(): Response {
    this.#real ??= this.toWeb();
    return this.#real;
  }

  get status(): number {
    return this.#status;
  }
  get statusText(): string {
    return "";
  }
  get ok(): boolean {
    return this.#status >= 200 && this.#status < 300;
  }
  get type(): ResponseType {
    return "default";
  }
  get url(): string {
    return "";
  }
  get redirected(): boolean {
    return false;
  }
  get headers(): Headers {
    if (!this.#headers) {
      this.#headers = new Headers(this.#record ?? undefined);
      this.#record = null;
    }
    return this.#headers;
  }
  get body(): ReadableStream<Uint8Array> | null {
    return this.#body === null ? null : this.#web().body;
  }
  get bodyUsed(): boolean {
    return this.#real?.bodyUsed ?? false;
  }
  text(): Promise<string> {
    return this.#real ? this.#real.text() : Promise.resolve(this.#body ?? "");
  }
  json(): Promise<unknown> {
    return this.#real ? this.#real.json() : new Promise((resolve) => resolve(JSON.parse(this.#body ?? "")));
  }
  arrayBuffer(): Promise<ArrayBuffer> {
    return this.#real ? this.#real.arrayBuffer() : Promise.resolve(encoder.encode(this.#body ?? "").buffer as ArrayBuffer);
  }
  bytes(): Promise<Uint8Array> {
    return this.#real ? this.#real.bytes() : Promise.resolve(encoder.encode(this.#body ?? ""));
  }
  blob(): Promise<Blob> {
    return this.#web().blob();
  }
  formData(): Promise<FormData> {
    return this.#web().formData();
  }
  clone(): Response {
    const raw = this.raw();
    return raw ? (new LightResponse(raw.body, raw.status, raw.headers) as unknown as Response) : this.#web().clone();
  }
}
Object.setPrototypeOf(LightResponse.prototype, Response.prototype);

function recordOf(headers: Headers): HeaderRecord {
  const record: HeaderRecord = {};
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}

/**
 * A response with a string (or no) body and the given headers. Names are case-insensitive and
 * repeated names are joined with ", ", as `new Headers(record)` would do. No `Set-Cookie`: answers
 * that set cookies are pages and use `Response` itself.
 */
export function lightResponse(body: string | null, status: number, headers: HeaderRecord): Response {
  const record: HeaderRecord = {};
  for (const name in headers) {
    const key = name.toLowerCase();
    if (key === "set-cookie") throw new Error("lightResponse cannot carry Set-Cookie");
    const value = headers[name].trim();
    record[key] = key in record ? `${record[key]}, ${value}` : value;
  }
  return new LightResponse(body, status, record) as unknown as Response;
}

/** Status, headers and body of a light response without building anything; null for any other `Response`. */
export function rawResponse(response: Response): RawResponse | null {
  return response instanceof LightResponse ? response.raw() : null;
}

/** A real undici `Response` for code that needs one (Next's route handlers). */
export function toWebResponse(response: Response): Response {
  return response instanceof LightResponse ? response.toWeb() : response;
}

/** The same answer with more headers (`set` semantics; `Vary` is appended). */
export function withHeaders(response: Response, extra: HeaderRecord): Response {
  const raw = rawResponse(response);
  if (raw) {
    const headers = { ...raw.headers };
    for (const name in extra) {
      const key = name.toLowerCase();
      headers[key] = key === "vary" && headers.vary ? `${headers.vary}, ${extra[name]}` : extra[name];
    }
    return new LightResponse(raw.body, raw.status, headers) as unknown as Response;
  }
  const headers = new Headers(response.headers);
  for (const name in extra) {
    if (name.toLowerCase() === "vary") headers.append(name, extra[name]);
    else headers.set(name, extra[name]);
  }
  return new Response(response.body, { status: response.status, headers });
}

/** A 303 to `location`, never cached, sending no referrer; extra headers may repeat (Set-Cookie). */
export function redirect303(location: string, headers: [string, string][] = []): Response {
  const h = new Headers({ Location: location, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" });
  for (const [k, v] of headers) h.append(k, v);
  return new Response(null, { status: 303, headers: h });
}
