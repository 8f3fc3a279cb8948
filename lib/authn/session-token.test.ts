import { describe, expect, it } from "vitest";
import { sha256Hex } from "../crypto";
import { idleExpiryFrom, newSessionToken, parseSessionToken, SLIDE_AFTER_MS, slideIdleExpiry, verifySessionSecret } from "./session-token";

const HOUR = 3_600_000;
const at = (ms: number) => new Date(Date.UTC(2026, 10, 21, 12) + ms);

describe("the session token", () => {
  it("is a random id and secret, of which only the SHA-256 is kept", () => {
    const a = newSessionToken();
    const b = newSessionToken();
    expect(a.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(a.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.token).toBe(`${a.id}.${a.secret}`);
    expect(a.secretHash).toBe(sha256Hex(a.secret));
    expect(a.secretHash).not.toContain(a.secret);
    expect(new Set([a.id, b.id]).size).toBe(2);
    expect(new Set([a.secret, b.secret]).size).toBe(2);
  });

  it("parses back into id and secret, and refuses what is not one", () => {
    const t = newSessionToken();
    expect(parseSessionToken(t.token)).toEqual({ id: t.id, secret: t.secret });
    expect(parseSessionToken("a.b.c")).toEqual({ id: "a", secret: "b.c" });
    for (const raw of [null, undefined, "", ".", "abc", ".secret", "id.", "id\u0000.secret", "id.sec\u0000ret"]) {
      expect([raw, parseSessionToken(raw)]).toEqual([raw, null]);
    }
  });

  it("verifies only the secret whose hash the row stores", () => {
    const t = newSessionToken();
    expect(verifySessionSecret({ secretHash: t.secretHash }, t.secret)).toBe(true);
    expect(verifySessionSecret({ secretHash: t.secretHash }, newSessionToken().secret)).toBe(false);
    expect(verifySessionSecret({ secretHash: t.secretHash }, t.secretHash)).toBe(false);
    expect(verifySessionSecret({ secretHash: t.secretHash }, "")).toBe(false);
  });
});

describe("the sliding idle expiry", () => {
  const row = { lastSeenAt: at(0), absoluteExpiresAt: at(7 * 24 * HOUR) };

  it("slides at most once a minute", () => {
    expect(slideIdleExpiry(row, at(SLIDE_AFTER_MS), 12 * HOUR)).toBeNull();
    expect(slideIdleExpiry(row, at(SLIDE_AFTER_MS + 1), 12 * HOUR)).toEqual(at(SLIDE_AFTER_MS + 1 + 12 * HOUR));
  });

  it("never beyond the absolute expiry", () => {
    const late = at(7 * 24 * HOUR - HOUR);
    expect(slideIdleExpiry(row, late, 12 * HOUR)).toEqual(row.absoluteExpiresAt);
    expect(idleExpiryFrom(at(0), 2 * HOUR, at(HOUR))).toEqual(at(HOUR));
    expect(idleExpiryFrom(at(0), 2 * HOUR, at(3 * HOUR))).toEqual(at(2 * HOUR));
  });
});
