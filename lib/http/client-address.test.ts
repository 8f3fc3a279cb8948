import { describe, expect, it } from "vitest";
import { addressGroup, CLIENT_ADDRESS_HEADER, clientAddress, clientAddressOf } from "./client-address";

const headers = (h: Record<string, string>) => new Headers(h);

describe("the client address", () => {
  it("is the stamped socket address without TRUST_PROXY, whatever X-Forwarded-For says", () => {
    expect(clientAddressOf(headers({ [CLIENT_ADDRESS_HEADER]: "10.0.0.1", "x-forwarded-for": "203.0.113.7" }), false)).toBe("10.0.0.1");
  });

  it("is the left-most X-Forwarded-For address with TRUST_PROXY", () => {
    expect(clientAddressOf(headers({ [CLIENT_ADDRESS_HEADER]: "10.0.0.1", "x-forwarded-for": " 203.0.113.7 , 10.0.0.1" }), true)).toBe("203.0.113.7");
    expect(clientAddressOf(headers({ [CLIENT_ADDRESS_HEADER]: "10.0.0.1", "x-forwarded-for": "2001:db8::1" }), true)).toBe("2001:db8::1");
  });

  it("ignores a forwarded value that is not an address (client text of any length)", () => {
    expect(clientAddressOf(headers({ [CLIENT_ADDRESS_HEADER]: "10.0.0.1", "x-forwarded-for": "x".repeat(10_000) }), true)).toBe("10.0.0.1");
  });

  it("is null (and 'unknown' for the limiter) when nothing is known", () => {
    expect(clientAddressOf(headers({}), true)).toBeNull();
    expect(clientAddress(new Request("https://a.test/"), false)).toBe("unknown");
  });
});

describe("the address group every per-address rule counts under", () => {
  it("is an IPv4 address itself", () => {
    expect(addressGroup("203.0.113.7")).toBe("203.0.113.7");
    expect(addressGroup("203.0.113.8")).toBe("203.0.113.8");
  });

  it("is the /64 of an IPv6 address, however it is written", () => {
    const group = "2001:db8:1:2::/64";
    for (const address of ["2001:db8:1:2::1", "2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:0DB8:0001:0002:0000:0000:0000:0001", "2001:db8:1:2:0:0:0:ffff", "2001:db8:1:2::ffff:1.2.3.4"]) {
      expect(addressGroup(address)).toBe(group);
    }
    expect(addressGroup("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(addressGroup("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressGroup("2001:db8:0:0:1::")).toBe("2001:db8:0:0::/64");
    expect(addressGroup("::1")).toBe("0:0:0:0::/64");
    expect(addressGroup("::")).toBe("0:0:0:0::/64");
  });

  it("drops a zone id", () => {
    expect(addressGroup("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(addressGroup("fe80::2%25en0")).toBe("fe80:0:0:0::/64");
  });

  it("judges an IPv4-mapped IPv6 address as the IPv4 address, in either spelling", () => {
    expect(addressGroup("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(addressGroup("::FFFF:203.0.113.7")).toBe("203.0.113.7");
    expect(addressGroup("::ffff:cb00:7107")).toBe("203.0.113.7");
    expect(addressGroup("0:0:0:0:0:ffff:203.0.113.7")).toBe("203.0.113.7");
    // Not mapped: another prefix before the IPv4 tail is an IPv6 address like any other.
    expect(addressGroup("64:ff9b::203.0.113.7")).toBe("64:ff9b:0:0::/64");
  });

  it("is its own group, and leaves what is not an address as it is", () => {
    for (const address of ["2001:db8:1:2::1", "::ffff:203.0.113.7", "fe80::1%eth0", "198.51.100.1"]) {
      expect(addressGroup(addressGroup(address))).toBe(addressGroup(address));
    }
    expect(addressGroup("unknown")).toBe("unknown");
    expect(addressGroup("")).toBe("");
  });
});
