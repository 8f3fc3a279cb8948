import { describe, expect, it } from "vitest";
import { placeOf } from "./place";

describe("the place a lookup service answers", () => {
  it("reads the common services' names: city, region, country", () => {
    expect(placeOf({ ip: "x", city: "Berlin", region: "Land Berlin", country: "DE" })).toBe("Berlin, Land Berlin, DE");
    expect(placeOf({ city: "Lyon", regionName: "Auvergne-Rhône-Alpes", country: "France" })).toBe("Lyon, Auvergne-Rhône-Alpes, France");
    expect(placeOf({ city: "Leeds", region: "England", country_name: "United Kingdom", country: "GB" })).toBe("Leeds, England, United Kingdom");
  });

  it("keeps what it names short, printable and once; names nothing from an answer without a place", () => {
    expect(placeOf({ city: "Singapore", region: "Singapore", country: "SG" })).toBe("Singapore, SG");
    expect(placeOf({ city: "Evil\u0007\nTown".padEnd(200, "x") })).toBe("EvilTown".padEnd(80, "x"));
    for (const nothing of [null, "Berlin", 42, {}, { city: "  " }, { bogon: true }]) expect(placeOf(nothing)).toBeNull();
  });
});
