import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain .mjs module of the benchmark, without types
import { csrfFor } from "../../bench/lib/seed.mjs";
import { csrfToken } from "../../lib/http/csrf";

// The benchmark seeds sign-in transactions straight into the database and posts their forms with a
// token it computes itself (bench/lib/seed.mjs): it must be the token the hosted page would render.
describe("the benchmark's CSRF token for seeded sign-ins", () => {
  it("is lib/http/csrf.ts's token for the hosted sign-in form", () => {
    const masterKeyHex = "11".repeat(32);
    const bindings = ["bench-ws", "tx-0123456789abcdef", "binding-value_-"];
    expect(csrfFor(masterKeyHex, ...bindings)).toBe(csrfToken(Buffer.from(masterKeyHex, "hex"), "hosted-sign-in", bindings));
  });
});
