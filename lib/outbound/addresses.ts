/**
 * Which network addresses a server-side request may reach: public unicast only. Loopback,
 * link-local, private, unique-local, carrier-grade NAT, unspecified, multicast, broadcast and the
 * reserved and documentation ranges are refused, in IPv4 and IPv6, and IPv4 addresses carried
 * inside IPv6 (mapped, compatible, NAT64, 6to4) are judged as the IPv4 address they carry.
 *
 * The installation's allow-list (UPSTREAM_ALLOW, lib/config.ts) admits more: an address inside a
 * listed network, whatever its range; and the internal ranges (private, unique-local, site-local,
 * carrier-grade NAT) for a listed host name. Loopback and link-local (the cloud metadata address
 * 169.254.169.254 among them) need a listed network; unspecified and multicast addresses are
 * never reached.
 */
import { isIP } from "node:net";
import type { UpstreamAllow } from "../config";

interface Range {
  /** The network as a number (IPv4) or bigint (IPv6). */
  base: bigint;
  prefix: number;
  label: string;
}

function v4(text: string): bigint | null {
  const parts = text.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.reduce((acc, p) => (acc << 8n) | BigInt(Number(p)), 0n);
}

function v6(text: string): bigint | null {
  let address = text.toLowerCase().replace(/^\[|\]$/g, "");
  const zone = address.indexOf("%");
  if (zone >= 0) address = address.slice(0, zone);
  // A trailing dotted quad is two groups.
  const dotted = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address);
  if (dotted) {
    const value = v4(dotted[1]);
    if (value === null) return null;
    address = `${address.slice(0, dotted.index)}${(value >> 16n).toString(16)}:${(value & 0xffffn).toString(16)}`;
  }
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function range(cidr: string, label: string, family: 4 | 6): Range {
  const [net, bits] = cidr.split("/");
  const base = family === 4 ? v4(net) : v6(net);
  if (base === null) throw new Error(`bad range ${cidr}`);
  return { base, prefix: Number(bits), label };
}

const V4_REFUSED: Range[] = [
  range("0.0.0.0/8", "unspecified", 4),
  range("10.0.0.0/8", "private", 4),
  range("100.64.0.0/10", "carrier-grade NAT", 4),
  range("127.0.0.0/8", "loopback", 4),
  range("169.254.0.0/16", "link-local", 4),
  range("172.16.0.0/12", "private", 4),
  range("192.0.0.0/24", "reserved", 4),
  range("192.0.2.0/24", "documentation", 4),
  range("192.88.99.0/24", "reserved", 4),
  range("192.168.0.0/16", "private", 4),
  range("198.18.0.0/15", "reserved", 4),
  range("198.51.100.0/24", "documentation", 4),
  range("203.0.113.0/24", "documentation", 4),
  range("224.0.0.0/4", "multicast", 4),
  range("240.0.0.0/4", "reserved", 4),
];

const V6_REFUSED: Range[] = [
  range("::/128", "unspecified", 6),
  range("::1/128", "loopback", 6),
  range("100::/64", "reserved", 6),
  range("2001:db8::/32", "documentation", 6),
  range("fc00::/7", "unique-local", 6),
  range("fe80::/10", "link-local", 6),
  range("fec0::/10", "site-local", 6),
  range("ff00::/8", "multicast", 6),
];

/** IPv6 prefixes that carry an IPv4 address, and where it sits (bits from the right). */
const V4_CARRIERS: { range: Range; shift: bigint }[] = [
  { range: range("::ffff:0:0/96", "IPv4-mapped", 6), shift: 0n },
  { range: range("::/96", "IPv4-compatible", 6), shift: 0n },
  { range: range("64:ff9b::/96", "NAT64", 6), shift: 0n },
  { range: range("64:ff9b:1::/48", "NAT64", 6), shift: 0n },
  { range: range("2002::/16", "6to4", 6), shift: 80n },
];

const within = (value: bigint, r: Range, bits: number) => value >> BigInt(bits - r.prefix) === r.base >> BigInt(bits - r.prefix);

function refusedV4(value: bigint): string | null {
  return V4_REFUSED.find((r) => within(value, r, 32))?.label ?? null;
}

/** An IP literal (IPv6 with or without brackets or a zone) as a number, and the IPv4 address it carries, if any. */
function parsed(address: string): { family: 4 | 6; value: bigint; carried: bigint | null } | null {
  const bare = address.replace(/^\[|\]$/g, "");
  const family = isIP(bare.replace(/%.*$/, ""));
  if (family === 4) {
    const value = v4(bare);
    return value === null ? null : { family, value, carried: null };
  }
  if (family !== 6) return null;
  const value = v6(bare);
  if (value === null) return null;
  // Loopback and unspecified lie inside the IPv4-compatible prefix: they carry no IPv4 address.
  const carrier = V6_REFUSED.some((r) => within(value, r, 128)) ? undefined : V4_CARRIERS.find((c) => within(value, c.range, 128));
  return { family, value, carried: carrier ? (value >> carrier.shift) & 0xffffffffn : null };
}

/**
 * Why `address` (an IP literal, IPv6 with or without brackets) may not be reached: "loopback",
 * "private", …; null for a public unicast address. Anything that is not an IP address is refused.
 */
export function refusedAddress(address: string): string | null {
  const ip = parsed(address);
  if (!ip) return "not an address";
  if (ip.family === 4) return refusedV4(ip.value);
  if (ip.carried !== null) return refusedV4(ip.carried);
  return V6_REFUSED.find((r) => within(ip.value, r, 128))?.label ?? null;
}

/** The ranges a listed host name may resolve into: an organization's own networks. */
const INTERNAL = new Set(["private", "unique-local", "site-local", "carrier-grade NAT"]);
/** Never a destination, whatever the list says. */
const NEVER = new Set(["unspecified", "multicast", "not an address"]);

/**
 * The installation's allow-list as a rule: whether `host` (the name a request is addressed to, or
 * the IP literal) may reach `address`, which the address rule refused as `why`. `allow` is what
 * lib/config.ts validated: normalized host names, and networks as `address/prefix`.
 */
export function allowListed(allow: UpstreamAllow | undefined): (host: string, address: string, why: string) => boolean {
  if (!allow || (allow.hosts.length === 0 && allow.networks.length === 0)) return () => false;
  const networks = allow.networks.map((cidr) => {
    const family = isIP(cidr.slice(0, cidr.lastIndexOf("/")));
    return { family, range: range(cidr, "allowed", family === 4 ? 4 : 6) };
  });
  const hosts = new Set(allow.hosts);
  return (host, address, why) => {
    if (NEVER.has(why)) return false;
    const ip = parsed(address);
    if (!ip) return false;
    const inside = networks.some(({ family, range: r }) =>
      family === 4 ? (ip.family === 4 ? within(ip.value, r, 32) : ip.carried !== null && within(ip.carried, r, 32)) : ip.family === 6 && within(ip.value, r, 128),
    );
    if (inside) return true;
    return INTERNAL.has(why) && hosts.has(host.toLowerCase().replace(/\.$/, ""));
  };
}
