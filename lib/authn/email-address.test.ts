import { describe, expect, it } from "vitest";
import { EMAIL_MAX_LENGTH, normalizeEmail, parseEmail } from "./email-address";

describe("normalizeEmail", () => {
  it("gives every spelling of one mailbox the same key: case, the domain's trailing dot, surrounding whitespace", () => {
    for (const spelling of ["alice@acme.test", "ALICE@acme.test.", "Alice@ACME.Test", " alice@acme.test.\t", "\nALICE@ACME.TEST\n", "alice@acme.test."]) {
      expect(normalizeEmail(spelling), spelling).toBe("alice@acme.test");
    }
  });

  it("shows the address in the case it was written in, trimmed and without the domain's trailing dot", () => {
    expect(parseEmail("  Alice.Smith@ACME.test. ")).toEqual({ normalized: "alice.smith@acme.test", display: "Alice.Smith@ACME.test" });
  });

  it("refuses what no account can have: no @, an empty part, blank or empty labels, more than one trailing dot, spaces, U+0000, too long", () => {
    for (const input of [
      null,
      undefined,
      "",
      "   ",
      "alice",
      "@acme.test",
      "alice@",
      "alice@acme",
      "alice@acme.test..",
      "alice@acme..test",
      "alice@.acme.test",
      "alice@@acme.test",
      "al ice@acme.test",
      "alice@ac me.test",
      "alice\u0000@acme.test",
      `${"a".repeat(EMAIL_MAX_LENGTH - "@acme.test".length + 1)}@acme.test`,
    ]) {
      expect(normalizeEmail(input), JSON.stringify(input)).toBeNull();
    }
    expect(normalizeEmail(`${"a".repeat(EMAIL_MAX_LENGTH - "@acme.test".length)}@acme.test`)).not.toBeNull();
    // The length is judged without the trailing dot, which is not kept.
    expect(normalizeEmail(`${"a".repeat(EMAIL_MAX_LENGTH - "@acme.test".length)}@acme.test.`)).not.toBeNull();
  });
});
