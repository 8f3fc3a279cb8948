import { describe, expect, it } from "vitest";
import { hasDuplicates, isIdentityScope, splitScope } from "./scopes";

describe("scope parsing", () => {
  it("splits on single spaces", () => expect(splitScope("openid email read:things")).toEqual(["openid", "email", "read:things"]));
  it("refuses empty tokens (double, leading or trailing spaces)", () => {
    for (const v of ["openid  email", " openid", "openid ", ""]) expect(splitScope(v)).toBeNull();
  });
  it("refuses quotes, backslashes and control characters", () => {
    for (const v of ['openid "x"', "openid a\\b", "openid \u0001"]) expect(splitScope(v)).toBeNull();
  });
  it("detects duplicates", () => {
    expect(hasDuplicates(["a", "b", "a"])).toBe(true);
    expect(hasDuplicates(["a", "b"])).toBe(false);
  });
  it("knows the identity scopes", () => {
    expect(["openid", "email", "profile", "offline_access"].every(isIdentityScope)).toBe(true);
    expect(isIdentityScope("read:things")).toBe(false);
  });
});
