import { beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { signingKeys } from "../../db/schema";
import { call, createHarness, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { API, standardWorkspace } from "../helpers/fixtures";

let h: Harness;
const ws = uniqueWorkspaceId("disc");
const issuer = `${PUBLIC_URL}/t/${ws}`;

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

describe("GET /.well-known/openid-configuration", () => {
  it("publishes the exact issuer, endpoints and supported values", async () => {
    const res = await call(h, `/t/${ws}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.issuer).toBe(issuer);
    expect(doc.authorization_endpoint).toBe(`${issuer}/oauth2/authorize`);
    expect(doc.token_endpoint).toBe(`${issuer}/oauth2/token`);
    expect(doc.userinfo_endpoint).toBe(`${issuer}/oidc/userinfo`);
    expect(doc.jwks_uri).toBe(`${issuer}/.well-known/jwks.json`);
    expect(doc.end_session_endpoint).toBe(`${issuer}/oidc/logout`);
    expect(doc.revocation_endpoint).toBe(`${issuer}/oauth2/revoke`);
    expect(doc.introspection_endpoint).toBe(`${issuer}/oauth2/introspect`);
    expect(doc.response_types_supported).toEqual(["code"]);
    expect(doc.code_challenge_methods_supported).toEqual(["S256"]);
    expect(doc.authorization_response_iss_parameter_supported).toBe(true);
    expect(doc.id_token_signing_alg_values_supported).toEqual(["ES256"]);
    expect(doc.grant_types_supported).toEqual(["authorization_code", "refresh_token", "client_credentials"]);
    expect(doc.token_endpoint_auth_methods_supported).toEqual(["client_secret_basic", "none"]);
    expect(doc.subject_types_supported).toEqual(["pairwise"]);
  });

  it("takes scope metadata from client_id, deterministically", async () => {
    const spa = await (await call(h, `/t/${ws}/.well-known/openid-configuration?client_id=spa`)).json();
    expect(spa.scopes_supported).toEqual(["email", "openid", "profile", "read:things", "write:things"]);
    const minimal = await (await call(h, `/t/${ws}/.well-known/openid-configuration?client_id=minimal`)).json();
    expect(minimal.scopes_supported).toEqual(["openid"]);
    const again = await (await call(h, `/t/${ws}/.well-known/openid-configuration?client_id=spa`)).json();
    expect(again).toEqual(spa);
    expect(spa.issuer).toBe(issuer);
  });

  it("answers an unknown client, an unknown workspace and an unknown route with the same generic 404", async () => {
    const unknownClient = await call(h, `/t/${ws}/.well-known/openid-configuration?client_id=nope`);
    const unknownWorkspace = await call(h, `/t/no-such-workspace/.well-known/openid-configuration`);
    expect((await call(h, `/t/${ws}/no/such/route`)).status).toBe(599); // not a route: Next's catch-all answers
    const catchAll = await import("../../app/t/[tenant]/[...rest]/route");
    const unknownRoute = await catchAll.GET();
    for (const res of [unknownClient, unknownWorkspace, unknownRoute]) expect(res.status).toBe(404);
    const bodies = await Promise.all([unknownClient.json(), unknownWorkspace.json(), unknownRoute.json()]);
    expect(bodies[0]).toEqual({ error: "invalid_request", error_description: "Not found" });
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);
  });

  it("rejects unrecognized and duplicated query parameters", async () => {
    expect((await call(h, `/t/${ws}/.well-known/openid-configuration?foo=1`)).status).toBe(400);
    expect((await call(h, `/t/${ws}/.well-known/openid-configuration?client_id=spa&client_id=web`)).status).toBe(400);
  });
});

describe("GET /.well-known/jwks.json", () => {
  it("creates an ES256 key on first use, publishes only its public half, with caching headers", async () => {
    const res = await call(h, `/t/${ws}/.well-known/jwks.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toMatch(/max-age=\d+/);
    const { keys } = await res.json();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
    expect(keys[0].kid).toBeTruthy();
    expect(keys[0].d).toBeUndefined();
    const again = await (await call(h, `/t/${ws}/.well-known/jwks.json`)).json();
    expect(again.keys).toEqual(keys);
  });

  it("stores the private key encrypted at rest", async () => {
    const [row] = await h.service.db.select().from(signingKeys).where(eq(signingKeys.workspaceId, ws));
    expect(row.privateJwkEncrypted.startsWith("v1.")).toBe(true);
    expect(row.privateJwkEncrypted).not.toContain('"d"');
    expect(JSON.stringify(row.publicJwk)).not.toContain('"d"');
  });

  it("keeps keys per workspace", async () => {
    const other = uniqueWorkspaceId("disc2");
    await seed(h, { ...standardWorkspace(other), apis: [{ audience: API, name: "x", permissions: ["read:things"] }], api_grants: [], roles: [], users: [] });
    const a = (await (await call(h, `/t/${ws}/.well-known/jwks.json`)).json()).keys[0].kid;
    const b = (await (await call(h, `/t/${other}/.well-known/jwks.json`)).json()).keys[0].kid;
    expect(a).not.toBe(b);
  });
});
