import { describe, expect, it } from "vitest";
import { CLIENT_ADDRESS_HEADER, clientAddress, clientAddressOf } from "./client-address";

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
