/**
 * The service's requests to other servers (lib/service.ts `Service.fetch`): a `fetch` over
 * node:http / node:https that reaches public addresses only. The host name is resolved by the
 * connection's own `lookup`, every address it resolves to is checked (lib/outbound/addresses.ts)
 * and the connection is made to the checked address, so a DNS answer cannot change between the
 * check and the connect; a redirect is followed only on request (`redirect: "follow"`), a bounded
 * number of times, each hop checked the same way. Answers are bounded in size and time.
 *
 * The installation's allow-list (UPSTREAM_ALLOW, lib/config.ts) admits its own networks and hosts,
 * judged on the same resolved addresses; ALLOW_PRIVATE_UPSTREAMS (development and tests only)
 * lifts the address check.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { Readable } from "node:stream";
import type { UpstreamAllow } from "../config";
import { allowListed, refusedAddress } from "./addresses";

const REFUSED = Symbol.for("latchkey.outbound-refused");

/**
 * A destination this policy does not reach, or an answer past its bounds: never retried, never a
 * dependency outage. Recognized by `instanceof` across copies of this module: the custom server
 * creates the service's fetch with its own, and Next's route bundles, which read the error, carry
 * another.
 */
export class OutboundRefused extends Error {
  readonly [REFUSED] = true;
  constructor(
    message: string,
    readonly reason: "address" | "protocol" | "redirects" | "too-large",
  ) {
    super(message);
    this.name = "OutboundRefused";
  }

  static [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as { [REFUSED]?: unknown })[REFUSED] === true;
  }
}

export interface OutboundPolicy {
  /** Loopback, private and the other non-public ranges are reachable (ALLOW_PRIVATE_UPSTREAMS). */
  allowPrivate: boolean;
  /** The installation's networks and hosts admitted although not public (UPSTREAM_ALLOW). */
  allow?: UpstreamAllow;
  /** Largest answer body read (default 1 MiB); a longer one fails its reader. */
  maxBytes?: number;
  /** Whole request bound (default 10 s), on top of the caller's own signal. */
  timeoutMs?: number;
  /** Redirects followed with `redirect: "follow"` (default 3). */
  maxRedirects?: number;
  /** Name resolution (default the system resolver, every address). */
  resolve?: (hostname: string) => Promise<LookupAddress[]>;
  /** Why an address is refused, or null (default lib/outbound/addresses.ts: every non-public address). */
  refuse?: (address: string) => string | null;
}

export const OUTBOUND_MAX_BYTES = 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_REDIRECTS = 3;

const systemResolve = (hostname: string) =>
  new Promise<LookupAddress[]>((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

/** Why a request addressed to `host` may not reach `address`, or null: the address rule, then the allow-list. */
type AddressCheck = (host: string, address: string) => string | null;

function addressCheck(policy: OutboundPolicy): AddressCheck {
  if (policy.allowPrivate) return () => null;
  const refuse = policy.refuse ?? refusedAddress;
  const admitted = allowListed(policy.allow);
  return (host, address) => {
    const why = refuse(address);
    return why && !admitted(host, address, why) ? why : null;
  };
}

function refusal(host: string, address: string, why: string): OutboundRefused {
  const shown = host === address ? host : `${host} (${address})`;
  return new OutboundRefused(`Requests to ${shown} are refused: a ${why} address is not a public one, and UPSTREAM_ALLOW does not list it`, "address");
}

/** The connection's resolver: every address checked, only checked addresses handed to the socket. */
function guardedLookup(policy: OutboundPolicy, check: AddressCheck): LookupFunction {
  const resolve = policy.resolve ?? systemResolve;
  return ((hostname: string, options: { all?: boolean; family?: number }, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    resolve(hostname).then(
      (found) => {
        const usable = found.filter((a) => !options.family || a.family === options.family);
        if (usable.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), []);
        for (const a of usable) {
          const why = check(hostname, a.address);
          if (why) return callback(refusal(hostname, a.address, why), []);
        }
        if (options.all) callback(null, usable);
        else callback(null, usable[0].address, usable[0].family);
      },
      (error: Error) => callback(error, []),
    );
  }) as LookupFunction;
}

function headerObject(headers: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(headers).forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

async function bodyBytes(body: BodyInit | null | undefined): Promise<Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof URLSearchParams) return Buffer.from(body.toString(), "utf8");
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return Buffer.from(await new Response(body).arrayBuffer());
}

const NO_BODY = new Set([204, 205, 304]);

interface Hop {
  method: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

/** This policy's own connection pools: a kept-alive connection is only ever one this policy checked. */
interface Agents {
  http: http.Agent;
  https: https.Agent;
}

function once(url: URL, hop: Hop, policy: OutboundPolicy, check: AddressCheck, agents: Agents, signal: AbortSignal): Promise<Response> {
  const maxBytes = policy.maxBytes ?? OUTBOUND_MAX_BYTES;
  if (url.protocol !== "https:" && url.protocol !== "http:") return Promise.reject(new OutboundRefused(`Requests to ${url.protocol} URLs are refused`, "protocol"));
  const host = url.hostname.replace(/^\[|\]$/g, "");
  // An IP literal never reaches `lookup`: it is checked here.
  if (isIP(host)) {
    const why = check(host, host);
    if (why) return Promise.reject(refusal(host, host, why));
  }
  const secure = url.protocol === "https:";
  const client = secure ? https : http;
  return new Promise<Response>((resolve, reject) => {
    const request = client.request(url, { method: hop.method, headers: hop.headers, lookup: guardedLookup(policy, check), agent: secure ? agents.https : agents.http, signal }, (res) => {
      const status = res.statusCode ?? 502;
      const length = Number(res.headers["content-length"]);
      if (Number.isFinite(length) && length > maxBytes) {
        res.destroy();
        return reject(new OutboundRefused(`The answer from ${url.origin} is ${length} bytes, over the ${maxBytes}-byte bound`, "too-large"));
      }
      let seen = 0;
      const bounded = new Readable({ read() {} });
      res.on("data", (chunk: Buffer) => {
        seen += chunk.length;
        if (seen > maxBytes) {
          res.destroy();
          bounded.destroy(new OutboundRefused(`The answer from ${url.origin} is over the ${maxBytes}-byte bound`, "too-large"));
          return;
        }
        bounded.push(chunk);
      });
      res.on("end", () => bounded.push(null));
      res.on("error", (error) => bounded.destroy(error));
      const headers = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (value === undefined) continue;
        for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
      }
      const empty = hop.method === "HEAD" || NO_BODY.has(status);
      if (empty) res.resume();
      resolve(new Response(empty ? null : (Readable.toWeb(bounded) as ReadableStream<Uint8Array>), { status, statusText: res.statusMessage, headers }));
    });
    request.on("error", reject);
    request.end(hop.body);
  });
}

/** The guarded `fetch` (see the file's comment). */
export function outboundFetch(policy: OutboundPolicy): typeof fetch {
  const agents: Agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  const check = addressCheck(policy);
  return async (input, init = {}) => {
    const request = input instanceof Request ? input : null;
    let url = new URL(request ? request.url : input instanceof URL ? input.href : String(input));
    const mode = init.redirect ?? request?.redirect ?? "follow";
    const limit = AbortSignal.timeout(policy.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const given = init.signal ?? request?.signal;
    const signal = given ? AbortSignal.any([given, limit]) : limit;
    let hop: Hop = {
      method: (init.method ?? request?.method ?? "GET").toUpperCase(),
      headers: headerObject(init.headers ?? request?.headers),
      body: await bodyBytes(init.body ?? (request?.body ? await request.arrayBuffer() : undefined)),
    };
    for (let redirects = 0; ; redirects++) {
      const response = await once(url, hop, policy, check, agents, signal);
      const location = response.headers.get("location");
      if (mode === "manual" || response.status < 300 || response.status > 399 || response.status === 304 || !location) return response;
      await response.body?.cancel().catch(() => undefined);
      if (mode === "error") throw new TypeError(`redirect from ${url.origin} refused (redirect: "error")`);
      if (redirects >= (policy.maxRedirects ?? DEFAULT_REDIRECTS)) throw new OutboundRefused(`More than ${policy.maxRedirects ?? DEFAULT_REDIRECTS} redirects from ${url.origin}`, "redirects");
      const next = new URL(location, url);
      const keepBody = response.status === 307 || response.status === 308;
      const headers = { ...hop.headers };
      // Credentials never travel to another origin.
      if (next.origin !== url.origin) {
        delete headers.authorization;
        delete headers.cookie;
      }
      if (!keepBody) {
        delete headers["content-type"];
        delete headers["content-length"];
      }
      hop = { method: keepBody || hop.method === "HEAD" ? hop.method : "GET", headers, body: keepBody ? hop.body : undefined };
      url = next;
    }
  };
}
