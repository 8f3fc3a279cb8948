import { describe, expect, it } from "vitest";
import { REQUEST_FAMILIES, requestPlace } from "./request-family";
import { routes } from "./router";

describe("the family of a request (log lines and HTTP metrics)", () => {
  it("names every path of the route table, under the workspace the path names", () => {
    for (const route of routes) {
      const place = requestPlace(`/t/acme${route.path}?client_id=x`);
      expect([route.path, place.family === "other"]).toEqual([route.path, false]);
      expect(place.workspace).toBe("acme");
    }
  });

  it("sorts the endpoints into their families", () => {
    const family = (target: string) => requestPlace(target).family;
    expect(family("/t/acme/oauth2/token")).toBe("token");
    expect(family("/t/acme/oauth2/authorize?client_id=spa&state=s")).toBe("authorize");
    expect(family("/t/acme/.well-known/openid-configuration")).toBe("discovery");
    expect(family("/.well-known/oauth-authorization-server/t/acme")).toBe("discovery");
    expect(family("/t/acme/.well-known/jwks.json")).toBe("jwks");
    expect(family("/t/acme/oidc/userinfo")).toBe("userinfo");
    expect(family("/t/acme/oidc/session")).toBe("session_check");
    expect(family("/t/acme/oauth2/introspect")).toBe("introspect");
    expect(family("/t/acme/oauth2/revoke")).toBe("revoke");
    expect(family("/t/acme/oidc/logout")).toBe("logout");
    expect(family("/t/acme/authorization/check")).toBe("authorization_check");
    expect(family("/t/acme/sign-in?tx=abc")).toBe("sign_in");
    expect(family("/t/acme/sign-in/password")).toBe("sign_in");
    expect(family("/t/acme/sign-up/email")).toBe("sign_in");
    expect(family("/t/acme/sign-in/sso")).toBe("federation");
    expect(family("/t/acme/federation/callback?code=x")).toBe("federation");
    expect(family("/t/acme/auth/account/launch")).toBe("handoff");
    expect(family("/t/acme/auth/account/handoff?launch=x")).toBe("handoff");
    expect(family("/t/acme/auth/account?client_id=web")).toBe("portal");
    expect(family("/t/acme/account")).toBe("portal");
    expect(family("/t/acme/account/verify/password")).toBe("portal");
    expect(family("/t/acme/branding/logo/abc")).toBe("static");
    expect(family("/healthz")).toBe("health");
    expect(family("/readyz?x=1")).toBe("health");
    expect(family("/_next/static/chunks/app.js")).toBe("static");
    expect(family("/favicon.ico")).toBe("static");
    expect(family("/console")).toBe("console");
    expect(family("/console/w/acme/users")).toBe("console");
    expect(family("/consoles")).toBe("other");
    expect(family("/demo/callback?code=x")).toBe("demo");
    expect(family("/.well-known/webauthn")).toBe("discovery");
    expect(family("/")).toBe("other");
    expect(family("/t/acme/no/such/path")).toBe("other");
  });

  it("takes the path as the application routes it: dot segments (also escaped ones) resolved, the query ignored", () => {
    expect(requestPlace("/t/acme/oauth2/../oauth2/token")).toEqual({ family: "token", workspace: "acme" });
    expect(requestPlace("/t/acme/sign-in/%2e%2e/oauth2/token")).toEqual({ family: "token", workspace: "acme" });
    expect(requestPlace("/healthz?/t/acme/oauth2/token")).toEqual({ family: "health", workspace: null });
  });

  it("names a workspace only when the path names a well-formed one, and every family is of the fixed vocabulary", () => {
    for (const target of ["/t/Not_A_Workspace/oauth2/token", "/t/a%20b/oauth2/token", `/t/${"a".repeat(64)}/oauth2/token`, "/t/acme", "/t//oauth2/token", "/.well-known/oauth-authorization-server/t/UP"]) {
      const place = requestPlace(target);
      expect(place.workspace).toBeNull();
      expect(REQUEST_FAMILIES).toContain(place.family);
    }
  });
});
