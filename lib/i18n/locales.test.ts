import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isLocale, LOCALES, negotiateLocale } from "./locales";

describe("negotiateLocale (Accept-Language, RFC 9110 §12.5.4 with RFC 4647 lookup)", () => {
  it("is English without a header, or with an empty one", () => {
    expect(negotiateLocale(null)).toBe("en");
    expect(negotiateLocale(undefined)).toBe("en");
    expect(negotiateLocale("")).toBe("en");
  });

  it("takes a supported language, and a regional variant by its language", () => {
    expect(negotiateLocale("de")).toBe("de");
    expect(negotiateLocale("fr")).toBe("fr");
    expect(negotiateLocale("de-CH")).toBe("de");
    expect(negotiateLocale("fr-CA")).toBe("fr");
    expect(negotiateLocale("DE-de")).toBe("de");
    expect(negotiateLocale("de-Latn-CH-1996")).toBe("de");
    expect(negotiateLocale("de-x-private")).toBe("de");
  });

  it("follows q-values, then the header's order; a range no language answers is passed over", () => {
    expect(negotiateLocale("en;q=0.5, de;q=0.9")).toBe("de");
    expect(negotiateLocale("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5")).toBe("fr");
    expect(negotiateLocale("es-ES, es;q=0.9, fr;q=0.8, en;q=0.7")).toBe("fr");
    expect(negotiateLocale("de, fr")).toBe("de");
    expect(negotiateLocale("de;q=0.8, fr;q=0.8")).toBe("de");
    expect(negotiateLocale("ja, zh-CN;q=0.9")).toBe("en");
  });

  it("never chooses a language marked q=0, not even for *", () => {
    expect(negotiateLocale("de;q=0, fr;q=0.1")).toBe("fr");
    expect(negotiateLocale("*")).toBe("en");
    expect(negotiateLocale("en;q=0, *")).toBe("de");
    expect(negotiateLocale("de;q=0")).toBe("en");
  });

  it("skips malformed ranges and q-values, and is English when nothing is well-formed", () => {
    expect(negotiateLocale("de;q=2, fr")).toBe("fr");
    expect(negotiateLocale("de;q=abc")).toBe("en");
    expect(negotiateLocale("d3, fr")).toBe("fr");
    expect(negotiateLocale(";;;,,,")).toBe("en");
    expect(negotiateLocale("de_DE")).toBe("en");
    expect(negotiateLocale("deutsch-sprache-ist-lang")).toBe("en");
    expect(negotiateLocale(`${"x,".repeat(10_000)}de`)).toBe("en");
  });

  it("never throws and always answers a supported language (property)", () => {
    const range = fc.oneof(fc.constantFrom("de", "fr", "en", "*", "de-CH", "fr-CA", "es", "x"), fc.string({ maxLength: 12 }));
    const element = fc.tuple(range, fc.option(fc.oneof(fc.double({ min: -1, max: 2 }).map(String), fc.string({ maxLength: 6 })))).map(([r, q]) => (q === null ? r : `${r};q=${q}`));
    fc.assert(
      fc.property(fc.oneof(fc.array(element, { maxLength: 8 }).map((parts) => parts.join(", ")), fc.string(), fc.string({ unit: "binary" })), (header) => {
        expect(isLocale(negotiateLocale(header))).toBe(true);
      }),
      { numRuns: 2000 },
    );
    expect(LOCALES).toContain(negotiateLocale("de"));
  });
});
