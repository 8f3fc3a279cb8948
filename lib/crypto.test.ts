import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { decryptSecret, encryptSecret, randomToken, safeEqual, sha256Base64Url } from "./crypto";

describe("crypto helpers", () => {
  it("computes the RFC 7636 S256 challenge (appendix B vector)", () => {
    expect(sha256Base64Url("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
  });
  it("round-trips sealed secrets and binds them to their purpose and key", () => {
    const key = randomBytes(32);
    const sealed = encryptSecret(key, "private jwk", "signing-key:1");
    expect(sealed).not.toContain("private jwk");
    expect(decryptSecret(key, sealed, "signing-key:1")).toBe("private jwk");
    expect(() => decryptSecret(key, sealed, "signing-key:2")).toThrow();
    expect(() => decryptSecret(randomBytes(32), sealed, "signing-key:1")).toThrow();
  });
  it("compares in constant time and exactly", () => {
    expect(safeEqual("abc", "abc")).toBe(true);
    expect(safeEqual("abc", "abd")).toBe(false);
    expect(safeEqual("abc", "abcd")).toBe(false);
  });
  it("hands out random tokens of the asked length that never repeat, across pool refills", () => {
    const seen = new Set<string>();
    // 32-byte tokens: 128 per 4 KiB pool, so this crosses many refills; 1-byte and 5000-byte ones bypass alignment.
    for (let i = 0; i < 2000; i++) seen.add(randomToken(32));
    expect(seen.size).toBe(2000);
    for (const token of seen) expect(Buffer.from(token, "base64url")).toHaveLength(32);
    expect(Buffer.from(randomToken(5000), "base64url")).toHaveLength(5000);
    const a = randomToken(24);
    const b = randomToken(24);
    expect(a).not.toBe(b);
    // No byte handed out twice: consecutive tokens do not overlap.
    expect(Buffer.from(a, "base64url").equals(Buffer.from(b, "base64url"))).toBe(false);
  });
});
