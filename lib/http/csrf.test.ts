import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { csrfToken, verifyCsrfToken } from "./csrf";

const key = randomBytes(32);
const bindings = ["demo", "tx-1", "browser-binding-1"];

describe("the CSRF token", () => {
  it("verifies for the purpose and values it was made for", () => {
    const token = csrfToken(key, "hosted-sign-in", bindings);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(verifyCsrfToken(key, "hosted-sign-in", bindings, token)).toBe(true);
  });

  it("refuses a token bound to another transaction, browser binding or workspace", () => {
    const token = csrfToken(key, "hosted-sign-in", bindings);
    expect(verifyCsrfToken(key, "hosted-sign-in", ["demo", "tx-2", "browser-binding-1"], token)).toBe(false);
    expect(verifyCsrfToken(key, "hosted-sign-in", ["demo", "tx-1", "browser-binding-2"], token)).toBe(false);
    expect(verifyCsrfToken(key, "hosted-sign-in", ["other", "tx-1", "browser-binding-1"], token)).toBe(false);
    expect(verifyCsrfToken(key, "hosted-sign-in", ["demo", "tx-1"], token)).toBe(false);
  });

  it("refuses under another master key, and a missing, empty or altered token", () => {
    const token = csrfToken(key, "hosted-sign-in", bindings);
    expect(verifyCsrfToken(randomBytes(32), "hosted-sign-in", bindings, token)).toBe(false);
    for (const presented of [null, undefined, "", token.slice(1), `${token}x`, token.toUpperCase()]) {
      expect(verifyCsrfToken(key, "hosted-sign-in", bindings, presented)).toBe(false);
    }
  });

  it("keeps the values apart: moving a separator never yields the same token", () => {
    expect(csrfToken(key, "hosted-sign-in", ["a.b", "c"])).not.toBe(csrfToken(key, "hosted-sign-in", ["a", "b.c"]));
    expect(csrfToken(key, "hosted-sign-in", ["1:a", ""])).not.toBe(csrfToken(key, "hosted-sign-in", ["1", "a"]));
    expect(csrfToken(key, "hosted-sign-in", ["ab"])).not.toBe(csrfToken(key, "hosted-sign-in", ["a", "b"]));
  });
});
