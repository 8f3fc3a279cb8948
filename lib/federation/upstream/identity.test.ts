import { describe, expect, it } from "vitest";
import { RECEIVED_LIMITS, receivedOf } from "./identity";

describe("what an upstream sent, as a connection test shows it", () => {
  it("keeps a string as it is, anything else as JSON, an array's elements each one value, and skips what is undefined", () => {
    expect(receivedOf("ID token", Object.entries({ sub: "u1", exp: 1700000000, email_verified: true, address: { country: "DE" }, groups: ["a", 2], gone: undefined, nothing: null }))).toEqual([
      { source: "ID token", name: "sub", values: ["u1"] },
      { source: "ID token", name: "exp", values: ["1700000000"] },
      { source: "ID token", name: "email_verified", values: ["true"] },
      { source: "ID token", name: "address", values: ['{"country":"DE"}'] },
      { source: "ID token", name: "groups", values: ["a", "2"] },
      { source: "ID token", name: "nothing", values: ["null"] },
    ]);
  });

  it("is bounded: attributes, values per attribute and characters per value", () => {
    const many = Array.from({ length: RECEIVED_LIMITS.attributes + 5 }, (_, i): [string, unknown] => [`a${i}`, "x"]);
    expect(receivedOf("Assertion", many)).toHaveLength(RECEIVED_LIMITS.attributes);
    const [wide] = receivedOf("Assertion", [["groups", Array.from({ length: 50 }, (_, i) => `g${i}`)]]);
    expect(wide!.values).toHaveLength(RECEIVED_LIMITS.values);
    const [long] = receivedOf("Assertion", [["n".repeat(5_000), "v".repeat(5_000)]]);
    expect(long!.values[0]).toBe(`${"v".repeat(RECEIVED_LIMITS.characters)}…`);
    expect(long!.name).toHaveLength(RECEIVED_LIMITS.characters + 1);
  });
});
