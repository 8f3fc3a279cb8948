import { describe, expect, it } from "vitest";
import { DomainError, lookupVerificationRecords, normalizeDomain, txtRecordFor } from "./domains";

describe("normalizeDomain", () => {
  it("lower-cases, trims and drops the trailing dot", () => {
    expect(normalizeDomain("  Example.COM. ")).toBe("example.com");
    expect(normalizeDomain("mail.sub.example.co.uk")).toBe("mail.sub.example.co.uk");
  });

  it("stores internationalized names as punycode", () => {
    expect(normalizeDomain("Bücher.example")).toBe("xn--bcher-kva.example");
  });

  it.each([
    ["", /Enter a domain/],
    ["ada@example.com", /part after @/],
    ["https://example.com", /not a domain name/],
    ["exa mple.com", /not a domain name/],
    ["-bad.example.com", /not a domain name/],
    ["bad-.example.com", /not a domain name/],
    ["a..example.com", /not a domain name/],
    [`${"a".repeat(64)}.com`, /not a domain name/],
    ["com", /top-level domain/],
    ["localhost", /top-level domain/],
    ["10.0.0.1", /address/],
    ["co.uk", /public suffix/],
    ["github.io", /public suffix/],
  ])("refuses %j", (input, message) => {
    expect(() => normalizeDomain(input)).toThrow(DomainError);
    expect(() => normalizeDomain(input)).toThrow(message);
  });
});

describe("the verification record", () => {
  it("is a TXT record under _latchkey carrying the token", () => {
    expect(txtRecordFor({ domain: "example.com", verificationToken: "tok" })).toEqual({ name: "_latchkey.example.com", value: "latchkey-domain-verification=tok" });
  });

  it("joins the strings of one record and asks the right name", async () => {
    const asked: string[] = [];
    const lookup = await lookupVerificationRecords("example.com", async (name) => {
      asked.push(name);
      return [["latchkey-domain-", "verification=tok"], ["other"]];
    });
    expect(asked).toEqual(["_latchkey.example.com"]);
    expect(lookup).toEqual({ ok: true, records: ["latchkey-domain-verification=tok", "other"] });
  });

  it("turns every DNS failure into an answer, never an exception", async () => {
    const fail = (code: string) => async () => {
      throw Object.assign(new Error(code), { code });
    };
    expect(await lookupVerificationRecords("example.com", fail("ENOTFOUND"))).toEqual({ ok: false, reason: "no TXT record at _latchkey.example.com" });
    expect(await lookupVerificationRecords("example.com", fail("ETIMEOUT"))).toEqual({ ok: false, reason: "DNS did not answer in time" });
    expect(await lookupVerificationRecords("example.com", fail("ESERVFAIL"))).toEqual({ ok: false, reason: "DNS lookup failed (ESERVFAIL)" });
    expect(
      await lookupVerificationRecords("example.com", async () => {
        throw "weird";
      }),
    ).toEqual({ ok: false, reason: "DNS lookup failed (error)" });
  });
});
