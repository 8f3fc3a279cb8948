import { describe, expect, it } from "vitest";
import { normalHost, requestHostOf } from "./request-host";

const headers = (values: Record<string, string>) => ({ get: (name: string) => values[name] ?? null });

describe("the request host", () => {
  it("is a DNS name or an address with an optional port, lower case, without a trailing dot", () => {
    expect(normalHost("Login.Acme.Test.")).toBe("login.acme.test");
    expect(normalHost(" localhost:3000 ")).toBe("localhost:3000");
    expect(normalHost("LOGIN.ACME.TEST.:65535")).toBe("login.acme.test:65535");
    expect(normalHost("127.0.0.1:1")).toBe("127.0.0.1:1");
    expect(normalHost("[::1]:3000")).toBe("[::1]:3000");
    expect(normalHost("xn--bcher-kva.example")).toBe("xn--bcher-kva.example");
  });

  it("is no host at all for anything else", () => {
    for (const raw of ["a_b.rt.localhost:34000", "x_y.evil.test", "evil.test/x", "evil test", "localhost:100000", "localhost:034000", "localhost:0", "localhost:65536", "localhost:", "", " ", "-a.test", "a-.test", "a..b", `${"a".repeat(64)}.test`, `${"abcdefgh.".repeat(29)}test`, "[::1", "[1:2:3]", "[::1%eth0]", "user@host", "host:80:80", "h\u00e9.test", "a.test, b.test"]) {
      expect([raw, normalHost(raw)]).toEqual([raw, null]);
    }
  });

  it("tells a request without Host from one with an invalid Host", () => {
    expect(requestHostOf(headers({}), false)).toEqual({ kind: "none" });
    expect(requestHostOf(headers({ host: "a_b.test" }), false)).toEqual({ kind: "invalid" });
    expect(requestHostOf(headers({ host: "" }), false)).toEqual({ kind: "invalid" });
    expect(requestHostOf(headers({ host: "A.Test" }), false)).toEqual({ kind: "host", host: "a.test" });
  });

  it("behind a trusted proxy, is X-Forwarded-Host's first entry when it is there, whatever Host says", () => {
    expect(requestHostOf(headers({ host: "10.0.0.5:3000", "x-forwarded-host": "login.acme.test, evil.test" }), true)).toEqual({ kind: "host", host: "login.acme.test" });
    expect(requestHostOf(headers({ host: "auth.example.test", "x-forwarded-host": "a_b.test" }), true)).toEqual({ kind: "invalid" });
    expect(requestHostOf(headers({ host: "auth.example.test", "x-forwarded-host": "" }), true)).toEqual({ kind: "invalid" });
    expect(requestHostOf(headers({ host: "auth.example.test" }), true)).toEqual({ kind: "host", host: "auth.example.test" });
    expect(requestHostOf(headers({ host: "auth.example.test", "x-forwarded-host": "a_b.test" }), false)).toEqual({ kind: "host", host: "auth.example.test" });
  });
});
