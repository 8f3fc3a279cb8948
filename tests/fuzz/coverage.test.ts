/**
 * The fuzzer's routes are generated from the route table (lib/server/router.ts): a route added
 * later without a fuzz case fails here, as does a case left behind by a route that went away, and
 * a route file under app/t/[tenant] outside the table (whose methods the table's edge rule would
 * not answer).
 */
import { describe, expect, it } from "vitest";
import { routes } from "../../lib/server/router";
import { fuzzedRoutes, MISSING_CASES, ROUTES, routeFilePath } from "./cases";

describe("the fuzzed routes", () => {
  it("cover every route of the table, each with a case, and every route file binds the table", () => {
    expect(MISSING_CASES).toEqual([]);
    for (const route of routes) expect(ROUTES.some((r) => r.method === route.method && r.path === route.path), `${route.method} ${route.path}`).toBe(true);
    expect(ROUTES.find((r) => r.path === "/branding/logo")?.target).toMatch(/^\/branding\/logo\/[0-9a-f]{64}$/);
  });

  it("name a route without a case, a case without a route, and a route file outside the table", () => {
    const table = [...routes, { method: "POST", path: "/sign-in/carrier-pigeon" }];
    expect(fuzzedRoutes(table, ["/oauth2/token"]).missing).toEqual(["no fuzz case for the route POST /sign-in/carrier-pigeon"]);
    expect(fuzzedRoutes(routes, ["/oauth2/token", "/branding/banner/[digest]"]).missing).toEqual(["the route file of /branding/banner/[digest] is outside the route table"]);
    expect(fuzzedRoutes(routes.slice(1), []).missing).toEqual(["a fuzz case for GET /.well-known/openid-configuration, which is no route"]);
  });

  it("read route files as the issuer sees their paths", () => {
    expect(routeFilePath("app/t/[tenant]/oauth2/token/route.ts")).toBe("/oauth2/token");
    expect(routeFilePath("app/t/[tenant]/branding/banner/[digest]/route.ts")).toBe("/branding/banner/[digest]");
    expect(routeFilePath("app/t/[tenant]/[...rest]/route.ts")).toBeNull();
    expect(routeFilePath("app/t/[tenant]/branding/logo/[[...digest]]/route.ts")).toBeNull();
  });
});
