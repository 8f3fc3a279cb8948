import { describe, expect, it } from "vitest";
import { FEATURES } from "./registry";
import { FEATURE_ROUTES } from "./routes";
import type { Feature } from "../surfaces/feature";

describe("the route registry", () => {
  it("lists exactly the routes the descriptors declare, the same values in the registry's order", () => {
    const declared = FEATURES.flatMap((f: Feature) => (f.routes ? [f.routes] : []));
    expect(FEATURE_ROUTES.length).toBe(declared.length);
    FEATURE_ROUTES.forEach((routes, i) => expect(routes).toBe(declared[i]));
  });
});
