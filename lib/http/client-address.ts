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
 * The one client-address rule, for sessions, audit records and (grouped, `clientAddress`) every limit: with `trustProxy`
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

/**
 * The key every per-address limit counts under: the group (`addressGroup`) of the client address
 * (`clientAddressOf`), "unknown" when there is none. Audit records and sessions keep the whole
 * address (`clientAddressOf`): they record, they do not limit.
 */
export function clientAddress(request: Request, trustProxy: boolean): string {
  return clientAddressGroup(request.headers, trustProxy);
}

/** The same key from a request's headers alone (a page rendered by Next has no Request). */
export function clientAddressGroup(headers: HeaderSource, trustProxy: boolean): string {
  return addressGroup(clientAddressOf(headers, trustProxy) ?? "unknown");
}

/**
 * The one grouping of client addresses, for every per-address rule (the connection cap, the
 * request and guessing limits, the hashing queue's share): an IPv4 address is its own group; an
 * IPv6 address is grouped by its /64, since one subscriber usually holds a whole /64 and can send
 * from any address in it; an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, in either spelling)
 * is the IPv4 address. A zone id is dropped. The group of a group is itself. Anything that is not
 * an address ("unknown") is its own group, as it is.
 *
 * Written as `2001:db8:0:1::/64`: the first four groups in lowercase hex without leading zeros.
 */
export function addressGroup(address: string): string {
  let group = GROUPS.get(address);
  if (group === undefined) {
    // Telling an address's family runs Node's IPv6 pattern, a few microseconds for the IPv4-mapped
    // address every loopback or dual-stack connection has: each address is grouped once.
    if (GROUPS.size >= GROUPS_KEPT) GROUPS.clear();
    GROUPS.set(address, (group = groupOf(address)));
  }
  return group;
}

/** The addresses grouped recently, at most GROUPS_KEPT (all forgotten at once past it: a flood of new addresses costs what grouping each did before). */
const GROUPS = new Map<string, string>();
const GROUPS_KEPT = 4096;

function groupOf(address: string): string {
  const plain = address.replace(/%.*$/, "").replace(/::\/64$/, "::");
  const family = isIP(plain);
  if (family === 4) return plain;
  if (family !== 6) return address;
  const words = ipv6Words(plain.toLowerCase());
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) {
    return [words[6] >> 8, words[6] & 0xff, words[7] >> 8, words[7] & 0xff].join(".");
  }
  return `${words
    .slice(0, 4)
    .map((w) => w.toString(16))
    .join(":")}::/64`;
}

/** The eight 16-bit words of a valid IPv6 address (one `::` at most, an IPv4 tail allowed). */
function ipv6Words(address: string): number[] {
  const [head, tail] = address.split("::");
  const parse = (part: string | undefined): number[] =>
    !part
      ? []
      : part.split(":").flatMap((group) => {
          if (!group.includes(".")) return [parseInt(group, 16)];
          const [a, b, c, d] = group.split(".").map(Number);
          return [(a << 8) | b, (c << 8) | d];
        });
  const left = parse(head);
  const right = parse(tail);
  return tail === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}
