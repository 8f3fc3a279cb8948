import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";

/** Set by the listener (lib/server/node-server.ts) from the socket; any value a client sends is overwritten. */
export const CLIENT_ADDRESS_HEADER = "x-latchkey-client-address";

/** Anything with a header getter: a Request's headers, Next's headers(). */
export interface HeaderSource {
  get(name: string): string | null;
}

/** Node's parsed headers (the listener's request) as a header source. */
export function nodeHeaders(req: IncomingMessage): HeaderSource {
  return {
    get(name) {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(", ") : (value ?? null);
    },
  };
}

/**
 * The one client-address rule, for the limiter, sessions and audit records: with `trustProxy`
 * the left-most `X-Forwarded-For` entry when it is an IP address (a proxy we trust put it there;
 * anything else is client text and is ignored), otherwise the socket address the listener
 * stamped. Null when neither is known.
 */
export function clientAddressOf(headers: HeaderSource, trustProxy: boolean): string | null {
  if (trustProxy) {
    const forwarded = headers.get("x-forwarded-for")?.split(",")[0].trim();
    if (forwarded && isIP(forwarded) !== 0) return forwarded;
  }
  return headers.get(CLIENT_ADDRESS_HEADER) || null;
}

/** The address the limiter keys on: as `clientAddressOf`, "unknown" when there is none. */
export function clientAddress(request: Request, trustProxy: boolean): string {
  return clientAddressOf(request.headers, trustProxy) ?? "unknown";
}
