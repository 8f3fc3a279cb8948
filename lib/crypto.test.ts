import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { decryptSecret, encryptSecret, safeEqual, sha256Base64Url } from "./crypto";

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
});
