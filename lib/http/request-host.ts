import { isIP } from "node:net";
import type { Service } from "../service";
import type { HeaderSource } from "./client-address";

/**
 * The host a request names, decided once by `requestHostOf`:
 * - `host`: a valid host name or address with an optional port, lower case, as `host[:port]`;
 * - `none`: the request names no host at all (HTTP/1.0 without `Host`): it reaches the default host;
 * - `invalid`: it names one that is not a valid host (`a_b.example`, `evil.test/x`, `a b`, a port
 *   past 65535 or written with a leading zero, an empty value): served like an unknown host.
 */
export type RequestHost = { kind: "host"; host: string } | { kind: "none" } | { kind: "invalid" };

const NONE: RequestHost = { kind: "none" };
const INVALID: RequestHost = { kind: "invalid" };

/**
 * The one request-host rule. With `trustProxy` the first `X-Forwarded-Host` entry when the header
 * is there (a proxy we trust put it there), otherwise `Host`. The production listener has already
 * put the authority of an absolute-form request target in `Host` (lib/http/request-target.ts).
 */
export function requestHostOf(headers: HeaderSource, trustProxy: boolean): RequestHost {
  const forwarded = trustProxy ? headers.get("x-forwarded-host") : null;
  const raw = forwarded !== null ? forwarded.split(",")[0] : headers.get("host");
  if (raw === null) return NONE;
  const host = normalHost(raw);
  return host === null ? INVALID : { kind: "host", host };
}

/** A DNS name (letters, digits, hyphens; labels of at most 63, an optional trailing dot) or a bracketed IPv6 address, then an optional port. */
const HOST = /^(?:([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*)\.?|\[([0-9a-f:.]+)\])(?::([1-9][0-9]{0,4}))?$/;

/**
 * `raw` as a host, `host[:port]` lower case without a trailing dot on the name, or null when it is
 * not one: anything but a DNS name, an IPv4 or a bracketed IPv6 address, a port outside 1–65535 or
 * with a leading zero.
 */
export function normalHost(raw: string): string | null {
  const value = raw.trim().toLowerCase();
  const match = HOST.exec(value);
  if (!match) return null;
  const [, name, ipv6, port] = match;
  if (name !== undefined && name.length > 253) return null;
  if (ipv6 !== undefined && isIP(ipv6) !== 6) return null;
  if (port !== undefined && Number(port) > 65535) return null;
  const hostPart = name ?? `[${ipv6}]`;
  return port === undefined ? hostPart : `${hostPart}:${port}`;
}

/** `host[:port]` split; the port is null when absent. */
export function splitHost(host: string): { name: string; port: string | null } {
  const colon = host.lastIndexOf(":");
  if (colon === -1 || host.endsWith("]")) return { name: host, port: null };
  return { name: host.slice(0, colon), port: host.slice(colon + 1) };
}

type HostService = Pick<Service, "cache" | "config">;
const DEFAULT_HOST_KEY = "default-host";

/** The installation's default host (PUBLIC_URL's `host[:port]`) and its port, which every workspace hostname shares. */
export function defaultHost(service: HostService): { host: string; port: string } {
  let cached = service.cache.get(DEFAULT_HOST_KEY) as { host: string; port: string } | undefined;
  if (!cached) {
    const url = new URL(service.config.publicUrl);
    cached = { host: url.host, port: url.port };
    service.cache.set(DEFAULT_HOST_KEY, cached);
  }
  return cached;
}

/** Whether the request came to the default host, which serves every workspace: no lookup, no await (the listener's fast path). */
export function atDefaultHost(service: HostService, headers: HeaderSource): boolean {
  const own = defaultHost(service).host;
  // The common case, decided without parsing: `Host` exactly as PUBLIC_URL writes it (or none).
  if (!service.config.trustProxy || headers.get("x-forwarded-host") === null) {
    const raw = headers.get("host");
    if (raw === null || raw === own) return true;
  }
  const named = requestHostOf(headers, service.config.trustProxy);
  return named.kind === "none" || (named.kind === "host" && named.host === own);
}
