import { describe, expect, it } from "vitest";
import { hasExactlyMembers } from "./json";

describe("hasExactlyMembers", () => {
  it("holds for exactly the members, once each, in any order", () => {
    expect(hasExactlyMembers('{"b":1,"a":{"b":2}}', ["a", "b"])).toBe(true);
    expect(hasExactlyMembers('{"a":1}', ["a", "b"])).toBe(false);
    expect(hasExactlyMembers('{"a":1,"b":2,"c":3}', ["a", "b"])).toBe(false);
    expect(hasExactlyMembers('{"a":1,"b":2,"a":3}', ["a", "b"])).toBe(false);
    expect(hasExactlyMembers('{"a":1,"b\\u0022":2}', ["a", "b"])).toBe(false);
    expect(hasExactlyMembers("{}", [])).toBe(true);
  });
});
