import { describe, expect, it } from "vitest";
import { isNormalPath, requestTargetOf } from "./request-target";

describe("requestTargetOf", () => {
  it("keeps an origin-form target in normal form: path and query apart, no authority", () => {
    expect(requestTargetOf("/t/acme/oauth2/authorize?client_id=x&a=../b")).toEqual({ ok: true, path: "/t/acme/oauth2/authorize", query: "?client_id=x&a=../b", authority: null });
    for (const path of ["/", "/t/acme/.well-known/openid-configuration", "/_next/static/chunks/a.js", "/t/acme/x%2Fy", "/a//b", "/t/%FF", "/a.b/..c/c..", "/..a"]) expect([path, isNormalPath(path)]).toEqual([path, true]);
  });

  it("refuses a path with dot segments (also percent-encoded, in any case), backslashes, a leading // or characters a URL encodes", () => {
    for (const path of ["/t/rt/../../console", "/t/rt/..", "/_next/../console", "/t/rt/%2e%2e/console", "/t/rt/%2E%2e/console", "/t/rt/.%2E/console", "/t/rt/%2e./console", "/t/rt/./x", "/t/rt/%2e/x", "/t/rt/..\\console", "/a\\b", "//console", "/a b", "/a{b}", "/\u00ff", "/a#b"]) {
      expect([path, requestTargetOf(path).ok]).toEqual([path, false]);
    }
  });

  it("takes an absolute-form target's authority as its host, and its path in origin form", () => {
    expect(requestTargetOf("http://evil.test/t/rt/.well-known/openid-configuration")).toEqual({ ok: true, path: "/t/rt/.well-known/openid-configuration", query: "", authority: "evil.test" });
    expect(requestTargetOf("HTTPS://Auth.Example:8443?x=1")).toEqual({ ok: true, path: "/", query: "?x=1", authority: "Auth.Example:8443" });
    expect(requestTargetOf("http://a@b/")).toMatchObject({ ok: true, authority: "a@b" });
    expect(requestTargetOf("http://h/t/rt/../../console").ok).toBe(false);
  });

  it("refuses any other form", () => {
    for (const target of ["*", "auth.example:443", "console", "ftp://h/x", ""]) expect([target, requestTargetOf(target).ok]).toEqual([target, false]);
  });
});
