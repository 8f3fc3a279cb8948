import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { HOUR, MINUTE } from "../clock";
import { MAX_WORKLOAD_TOKEN_LENGTH, newWorkloadTokenId, openWorkloadToken, sealWorkloadToken, WORKLOAD_TOKEN_PREFIX, type WorkloadTokenClaims } from "./workload-token";

const key = randomBytes(32);
const issuedAt = new Date("2026-11-27T10:20:00Z");
const claims: WorkloadTokenClaims = {
  id: newWorkloadTokenId(),
  clientPk: "client-1",
  credentialId: "secret-1",
  apiId: "api-1",
  scope: ["read:things", "write:things"],
  issuedAt,
  expiresAt: new Date(issuedAt.getTime() + 5 * MINUTE),
};
const sealed = sealWorkloadToken(key, "ws-a", null, claims);

/** The token with one byte of its body changed. */
function flipped(token: string, index: number): string {
  const body = Buffer.from(token.slice(WORKLOAD_TOKEN_PREFIX.length), "base64url");
  body[index] ^= 0x01;
  return WORKLOAD_TOKEN_PREFIX + body.toString("base64url");
}

describe("sealed workload tokens", () => {
  it("open to the claims they were sealed with, in their workspace, under their master key", () => {
    expect(sealed).toMatch(/^lkw_[A-Za-z0-9_-]+$/);
    expect(openWorkloadToken(key, "ws-a", null, sealed, issuedAt)).toEqual(claims);
    // Expired tokens still open: expiry is judged with the rest of the token's authority.
    expect(openWorkloadToken(key, "ws-a", null, sealed, new Date(issuedAt.getTime() + 30 * MINUTE))).toEqual(claims);
  });

  it("have ids and IVs that never repeat across many tokens (the random pool hands out each byte once)", () => {
    const ids = new Set(Array.from({ length: 5000 }, () => newWorkloadTokenId()));
    expect(ids.size).toBe(5000);
    const ivs = new Set(Array.from({ length: 5000 }, () => Buffer.from(sealWorkloadToken(key, "ws-a", null, claims).slice(4), "base64url").subarray(5, 17).toString("hex")));
    expect(ivs.size).toBe(5000);
  });

  it("show nothing of their claims", () => {
    const text = Buffer.from(sealed.slice(4), "base64url").toString("latin1");
    for (const value of [claims.clientPk, claims.credentialId, claims.apiId, claims.id, "read:things"]) expect(text).not.toContain(value);
    // Two tokens of the same claims differ (a fresh IV each time).
    expect(sealWorkloadToken(key, "ws-a", null, claims)).not.toBe(sealed);
  });

  it("do not open in another workspace or under another master key", () => {
    expect(openWorkloadToken(key, "ws-b", null, sealed, issuedAt)).toBeNull();
    expect(openWorkloadToken(key, "ws-a\u0000", null, sealed, issuedAt)).toBeNull();
    expect(openWorkloadToken(randomBytes(32), "ws-a", null, sealed, issuedAt)).toBeNull();
  });

  it("open only at the host they were sealed at: the default host or one hostname of the workspace", () => {
    const atLogin = sealWorkloadToken(key, "ws-a", "login.a.test", claims);
    expect(openWorkloadToken(key, "ws-a", "login.a.test", atLogin, issuedAt)).toEqual(claims);
    expect(openWorkloadToken(key, "ws-a", "id.a.test", atLogin, issuedAt)).toBeNull();
    expect(openWorkloadToken(key, "ws-a", null, atLogin, issuedAt)).toBeNull();
    expect(openWorkloadToken(key, "ws-a", "login.a.test", sealed, issuedAt)).toBeNull();
    // The workspace and the hostname are bound as a pair, not as one string that could be split elsewhere.
    expect(openWorkloadToken(key, '["ws-a","login.a.test"]', null, atLogin, issuedAt)).toBeNull();
  });

  it("do not open with any byte changed: version, key hour, IV, ciphertext or tag", () => {
    const length = Buffer.from(sealed.slice(4), "base64url").length;
    for (let i = 0; i < length; i++) expect(openWorkloadToken(key, "ws-a", null, flipped(sealed, i), issuedAt)).toBeNull();
  });

  it("open only within an hour of their key's hour", () => {
    const hourStart = Math.floor(issuedAt.getTime() / HOUR) * HOUR;
    expect(openWorkloadToken(key, "ws-a", null, sealed, new Date(hourStart + 2 * HOUR - 1))).toEqual(claims);
    expect(openWorkloadToken(key, "ws-a", null, sealed, new Date(hourStart + 2 * HOUR))).toBeNull();
    expect(openWorkloadToken(key, "ws-a", null, sealed, new Date(hourStart - HOUR))).toEqual(claims);
    expect(openWorkloadToken(key, "ws-a", null, sealed, new Date(hourStart - HOUR - 1))).toBeNull();
  });

  it("refuse malformed input without throwing", () => {
    for (const token of ["", "lkw_", "lkw_!!", "lkw_AQ", `lkw_${"A".repeat(40)}`, "lka_abc", sealed.slice(0, -4), `${sealed}==`, sealed.slice(4)]) {
      expect(openWorkloadToken(key, "ws-a", null, token, issuedAt)).toBeNull();
    }
    // Even a genuine one, past the length a token of ours can have.
    const huge = sealWorkloadToken(key, "ws-a", null, { ...claims, scope: Array.from({ length: 250 }, (_, i) => `${i}:`.padEnd(64, "p")) });
    expect(huge.length).toBeGreaterThan(MAX_WORKLOAD_TOKEN_LENGTH);
    expect(openWorkloadToken(key, "ws-a", null, huge, issuedAt)).toBeNull();
  });

  it("hold 64 permissions of the longest kind (64 characters) in under 8 KiB, well within a request header", () => {
    const wide = { ...claims, scope: Array.from({ length: 64 }, (_, i) => `${i}:`.padEnd(64, "p")) };
    const token = sealWorkloadToken(key, "ws-a", null, wide);
    expect(token.length).toBeLessThan(8 * 1024);
    expect(openWorkloadToken(key, "ws-a", null, token, issuedAt)).toEqual(wide);
  });
});
