import { describe, expect, it } from "vitest";
import { FederationError } from "./contract";
import { microsoftTenantProblem, upstreamFromConnectionRow, upstreamFromSocialRow } from "./presets";

const social = (preset: "google" | "microsoft" | "apple" | "github" | "oidc", config: Record<string, unknown>, secret: string | null = "s3cret") =>
  upstreamFromSocialRow({ id: "sp-1", preset, clientId: "client-1", config }, secret);

function code(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(FederationError);
    return (e as FederationError).code;
  }
}

const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";

describe("social presets", () => {
  it("Google: its issuer, openid email profile", () => {
    expect(social("google", {})).toMatchObject({ protocol: "oidc", issuer: "https://accounts.google.com", clientId: "client-1", clientSecret: "s3cret", scopes: ["email", "profile"], endpoints: {}, source: { kind: "social", providerId: "sp-1", preset: "google" } });
  });

  it("Microsoft: the tenant's v2.0 issuer, for a tenant id or a domain", () => {
    expect(social("microsoft", { tenant: TENANT }).issuer).toBe(`https://login.microsoftonline.com/${TENANT}/v2.0`);
    expect(social("microsoft", { tenant: "contoso.onmicrosoft.com" }).issuer).toBe("https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0");
  });

  it("Microsoft: no tenant, or a multi-tenant alias, is misconfigured", () => {
    expect(code(() => social("microsoft", {}))).toBe("misconfigured");
    for (const tenant of ["common", "Organizations", "consumers", "not a tenant"]) expect(code(() => social("microsoft", { tenant }))).toBe("misconfigured");
    expect(microsoftTenantProblem("common")).toMatch(/one tenant/);
    expect(microsoftTenantProblem(TENANT)).toBeNull();
  });

  it("Apple: its issuer, name and email, team and key ids required", () => {
    expect(social("apple", { team_id: "TEAM123456", key_id: "KEY1234567" }, "PEM")).toMatchObject({ issuer: "https://appleid.apple.com", scopes: ["name", "email"], apple: { teamId: "TEAM123456", keyId: "KEY1234567" } });
    expect(code(() => social("apple", { key_id: "KEY1234567" }, "PEM"))).toBe("misconfigured");
    expect(code(() => social("apple", { team_id: "TEAM123456", key_id: "not an id!" }, "PEM"))).toBe("misconfigured");
  });

  it("GitHub: its endpoints and API, read:user user:email, identities under https://github.com", () => {
    expect(social("github", {})).toMatchObject({
      protocol: "github",
      issuer: "https://github.com",
      scopes: ["read:user", "user:email"],
      endpoints: { authorization: "https://github.com/login/oauth/authorize", token: "https://github.com/login/oauth/access_token", api: "https://api.github.com" },
    });
  });

  it("generic OpenID Connect: the issuer is required", () => {
    expect(social("oidc", { issuer: "https://id.example.test/realms/a" }).issuer).toBe("https://id.example.test/realms/a");
    expect(code(() => social("oidc", {}))).toBe("misconfigured");
  });

  it("every endpoint can be overridden, and extra scopes are added (openid never twice)", () => {
    const p = social("google", {
      issuer: "http://127.0.0.1:4000",
      authorization_endpoint: "http://127.0.0.1:4000/a",
      token_endpoint: "http://localhost:4000/t",
      userinfo_endpoint: "https://userinfo.example.test/me",
      jwks_uri: "http://[::1]:4000/jwks",
      scopes: ["openid", "groups", "email"],
    });
    expect(p.issuer).toBe("http://127.0.0.1:4000");
    expect(p.endpoints).toEqual({ authorization: "http://127.0.0.1:4000/a", token: "http://localhost:4000/t", userinfo: "https://userinfo.example.test/me", jwks: "http://[::1]:4000/jwks" });
    expect(p.scopes).toEqual(["email", "profile", "groups"]);
  });

  it("http outside loopback, a non-URL, a missing secret or a bad setting type is misconfigured", () => {
    expect(code(() => social("google", { issuer: "http://accounts.example.test" }))).toBe("misconfigured");
    expect(code(() => social("github", { token_endpoint: "http://github.example.test/token" }))).toBe("misconfigured");
    expect(code(() => social("oidc", { issuer: "not a url" }))).toBe("misconfigured");
    expect(code(() => social("oidc", { issuer: "ftp://id.example.test" }))).toBe("misconfigured");
    expect(code(() => social("google", {}, null))).toBe("misconfigured");
    expect(code(() => social("google", { scopes: "email" }))).toBe("misconfigured");
    expect(code(() => social("google", { scopes: ["two words"] }))).toBe("misconfigured");
  });
});

describe("enterprise connections", () => {
  const row = (config: Record<string, unknown>, kind: "oidc" | "saml" = "oidc") => ({ id: "conn-1", organizationId: "org-1", kind, config });

  it("an OIDC connection: issuer and client id from its settings, old keys ignored", () => {
    expect(upstreamFromConnectionRow(row({ issuer: "https://login.acme.test", client_id: "latchkey", domains: ["acme.test"] }), "s3cret")).toEqual({
      source: { kind: "connection", connectionId: "conn-1", organizationId: "org-1" },
      protocol: "oidc",
      issuer: "https://login.acme.test",
      clientId: "latchkey",
      clientSecret: "s3cret",
      endpoints: {},
      scopes: ["email", "profile"],
    });
  });

  it("SAML, a missing issuer, client id or secret is misconfigured", () => {
    expect(code(() => upstreamFromConnectionRow(row({ issuer: "https://login.acme.test", client_id: "x" }, "saml"), "s"))).toBe("misconfigured");
    expect(code(() => upstreamFromConnectionRow(row({ client_id: "x" }), "s"))).toBe("misconfigured");
    expect(code(() => upstreamFromConnectionRow(row({ issuer: "https://login.acme.test" }), "s"))).toBe("misconfigured");
    expect(code(() => upstreamFromConnectionRow(row({ issuer: "https://login.acme.test", client_id: "x" }), null))).toBe("misconfigured");
  });
});
