/**
 * The fuzzer's routes are generated from the route table (lib/server/router.ts) and the route
 * files under app/t/[tenant]: a route added later without a fuzz case fails here, as does a case
 * left behind by a route that went away.
 */
import { describe, expect, it } from "vitest";
import { routes } from "../../lib/server/router";
import { fuzzedRoutes, MISSING_CASES, ROUTES, routeFilePath } from "./cases";

describe("the fuzzed routes", () => {
  it("cover every route of the table and every route file, each with a case", () => {
    expect(MISSING_CASES).toEqual([]);
    for (const route of routes) expect(ROUTES.some((r) => r.method === route.method && r.path === route.path), `${route.method} ${route.path}`).toBe(true);
    expect(ROUTES.some((r) => r.path.startsWith("/branding/logo/"))).toBe(true);
  });

  it("name a route without a case, a route file without one, and a case without a route", () => {
    const table = [...routes, { method: "POST", path: "/sign-in/carrier-pigeon" }];
    expect(fuzzedRoutes(table, ["/branding/logo/[digest]"]).missing).toEqual(["no fuzz case for the route POST /sign-in/carrier-pigeon"]);
    expect(fuzzedRoutes(routes, ["/branding/logo/[digest]", "/branding/banner/[digest]"]).missing).toEqual(["no fuzz case for the route file of /branding/banner/[digest]"]);
    expect(fuzzedRoutes(routes.slice(1), ["/branding/logo/[digest]"]).missing).toEqual(["a fuzz case for GET /.well-known/openid-configuration, which is no route"]);
  });

  it("read route files as the issuer sees their paths", () => {
    expect(routeFilePath("app/t/[tenant]/oauth2/token/route.ts")).toBe("/oauth2/token");
    expect(routeFilePath("app/t/[tenant]/branding/logo/[digest]/route.ts")).toBe("/branding/logo/[digest]");
    expect(routeFilePath("app/t/[tenant]/[...rest]/route.ts")).toBeNull();
  });
});
