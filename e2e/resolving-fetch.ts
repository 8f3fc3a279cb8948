/**
 * A fetch that resolves some names itself, for a server-side client whose issuer is at a name no
 * DNS knows: the e2e suite's workspace hostname login.acme.test (e2e/hostnames.spec.ts), or a
 * hostname tried on a laptop before its DNS exists. The connection goes to the mapped address
 * while the URL, and so the Host header, keeps the name: what the server sees is what it would see
 * had DNS answered. Other names go to the ordinary fetch.
 *
 * Node's fetch can neither be given a resolver per call nor send a Host header of the caller's
 * choosing, so mapped requests go through node:http(s) with a `lookup` that answers the mapped
 * address. Redirects are never followed (the callers here all ask for `redirect: "manual"`).
 *
 * The mapping is written like curl's --resolve without the port: `login.acme.test=127.0.0.1`,
 * several separated by commas (the RESOLVE variable of e2e/customer-app.ts, which makes this its
 * global fetch). openid-client takes it as its `customFetch` too (e2e/hostnames.spec.ts).
 */
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";

/** fetch's shape, with the bodies openid-client's customFetch may pass (any Uint8Array). */
export type Fetch = (input: string | URL, init?: Omit<RequestInit, "body"> & { body?: BodyInit | Uint8Array | ArrayBuffer | null }) => Promise<Response>;

/** `name=address[,name=address…]` as a map; throws on anything else. */
export function parseResolve(spec: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const entry of spec.split(",").map((e) => e.trim()).filter(Boolean)) {
    const [name, address, ...rest] = entry.split("=").map((part) => part.trim());
    if (!name || !address || rest.length > 0 || isIP(address) === 0) {
      throw new Error(`RESOLVE: "${entry}" is not name=address (for example login.acme.test=127.0.0.1)`);
    }
    map.set(name.toLowerCase(), address);
  }
  return map;
}

/** Whether `hostname` reaches this machine: a loopback name or address, or a name mapped to one. */
export function isLoopbackName(hostname: string, map: ReadonlyMap<string, string> = new Map()): boolean {
  const loopback = (name: string) => name === "localhost" || name === "[::1]" || name === "::1" || /^127(\.\d{1,3}){3}$/.test(name);
  const mapped = map.get(hostname.toLowerCase());
  return loopback(hostname) || (mapped !== undefined && loopback(mapped));
}

// Node's own fetch, for the names not mapped (the customer app replaces the global one).
const nodeFetch = globalThis.fetch;

// Statuses whose response has no body (the Response constructor refuses one).
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export function resolvingFetch(map: ReadonlyMap<string, string>): Fetch {
  if (map.size === 0) return nodeFetch as Fetch;
  return async (input, init) => {
    const request = new Request(input, init as RequestInit);
    const url = new URL(request.url);
    const address = map.get(url.hostname.toLowerCase());
    if (address === undefined) return nodeFetch(request);
    const family = isIP(address);
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if (options.all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
      else callback(null, address, family);
    };
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const headers = Object.fromEntries(request.headers);
    if (body) headers["content-length"] = String(body.length);
    return new Promise<Response>((resolve, reject) => {
      const outgoing = (url.protocol === "https:" ? https : http).request(url, { method: request.method, headers, lookup, signal: request.signal }, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
        incoming.on("error", reject);
        incoming.on("end", () => {
          const responseHeaders = new Headers();
          for (let i = 0; i < incoming.rawHeaders.length; i += 2) responseHeaders.append(incoming.rawHeaders[i], incoming.rawHeaders[i + 1]);
          const status = incoming.statusCode ?? 502;
          resolve(new Response(NULL_BODY.has(status) ? null : Buffer.concat(chunks), { status, statusText: incoming.statusMessage, headers: responseHeaders }));
        });
      });
      outgoing.on("error", reject);
      outgoing.end(body);
    });
  };
}
