import type { HeaderSource } from "./client-address";

/**
 * The one request-host rule: the host the client asked for, lower-case, as `host[:port]`. With
 * `trustProxy` the first `X-Forwarded-Host` entry (a proxy we trust put it there), otherwise
 * `Host`. Null when the request names none (HTTP/1.0): such a request reaches the default host.
 * Anything that is not a plain host name or address with an optional port is null too.
 */
export function requestHostOf(headers: HeaderSource, trustProxy: boolean): string | null {
  const forwarded = trustProxy ? headers.get("x-forwarded-host")?.split(",")[0]?.trim() : undefined;
  const raw = (forwarded || headers.get("host") || "").trim().toLowerCase();
  if (!raw) return null;
  return HOST.test(raw) ? raw.replace(/\.(?=(:\d+)?$)/, "") : null;
}

/** A DNS name (letters, digits, hyphens, dots) or a bracketed IPv6 address, then an optional port. */
const HOST = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;

/** `host[:port]` split; the port is null when absent. */
export function splitHost(host: string): { name: string; port: string | null } {
  const colon = host.lastIndexOf(":");
  if (colon === -1 || host.endsWith("]")) return { name: host, port: null };
  return { name: host.slice(0, colon), port: host.slice(colon + 1) };
}
