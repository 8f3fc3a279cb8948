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
    expect(doc.grant_types_supported).toEqual(["authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:device_code"]);
    expect(doc.device_authorization_endpoint).toBe(`${issuer}/oauth2/device_authorization`);
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

describe("GET /.well-known/oauth-authorization-server/t/{workspace} (RFC 8414 §3.1)", () => {
  const metadata = (query = "", options: Parameters<typeof call>[2] = {}) => call(h, `/.well-known/oauth-authorization-server/t/${ws}${query}`, options);
  const discovery = (query = "", options: Parameters<typeof call>[2] = {}) => call(h, `/t/${ws}/.well-known/openid-configuration${query}`, options);
  const answer = async (res: Response) => ({ status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() });

  it("is the issuer's discovery document: the same content, CORS and caching, with and without client_id", async () => {
    for (const query of ["", "?client_id=spa", "?client_id=minimal"]) {
      const [viaMetadata, viaDiscovery] = [await answer(await metadata(query)), await answer(await discovery(query))];
      expect(viaMetadata, query).toEqual(viaDiscovery);
      expect(viaMetadata.status).toBe(200);
      expect(viaMetadata.headers["access-control-allow-origin"]).toBe("*");
      expect(viaMetadata.headers["cache-control"]).toBe("public, max-age=60");
    }
    // RFC 8414 §3.3: the issuer is the one whose metadata URL was asked for.
    const doc = await (await metadata()).json();
    expect(doc.issuer).toBe(issuer);
    expect(doc.token_endpoint).toBe(`${issuer}/oauth2/token`);
    expect((await (await metadata("?client_id=spa")).json()).scopes_supported).toEqual(["email", "openid", "profile", "read:things", "write:things"]);
  });

  it("answers an unknown workspace, an unknown client and a bad query exactly as discovery does", async () => {
    const unknownWorkspace = await answer(await call(h, "/.well-known/oauth-authorization-server/t/no-such-workspace"));
    expect(unknownWorkspace).toEqual(await answer(await call(h, "/t/no-such-workspace/.well-known/openid-configuration")));
    expect(unknownWorkspace.status).toBe(404);
    expect(JSON.parse(unknownWorkspace.body)).toEqual({ error: "invalid_request", error_description: "Not found" });
    expect(unknownWorkspace.headers["access-control-allow-origin"]).toBe("*");
    for (const query of ["?client_id=nope", "?foo=1", "?client_id=spa&client_id=web"]) {
      const res = await answer(await metadata(query));
      expect(res, query).toEqual(await answer(await discovery(query)));
      expect(res.status).toBeGreaterThanOrEqual(400);
    }
  });

  it("answers HEAD, a CORS preflight and another method as discovery does", async () => {
    for (const [method, headers] of [
      ["HEAD", {}],
      ["OPTIONS", { origin: "https://anywhere.example", "access-control-request-method": "GET" }],
      ["POST", {}],
      ["DELETE", {}],
    ] as [string, Record<string, string>][]) {
      const [viaMetadata, viaDiscovery] = [await answer(await metadata("", { method, headers })), await answer(await discovery("", { method, headers }))];
      expect(viaMetadata, method).toEqual(viaDiscovery);
    }
    const preflight = await metadata("", { method: "OPTIONS", headers: { origin: "https://anywhere.example", "access-control-request-method": "GET" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    const post = await metadata("", { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it("is only at RFC 8414's path: not under the issuer, not with a trailing segment", async () => {
    // Not table routes (599: the harness's mark for what Next answers; Next's 404s there).
    for (const path of [
      `/t/${ws}/.well-known/oauth-authorization-server`,
      `/.well-known/oauth-authorization-server/t/${ws}/`,
      `/.well-known/oauth-authorization-server/t/${ws}/oauth2/token`,
      `/.well-known/oauth-authorization-server/${ws}`,
      "/.well-known/oauth-authorization-server",
      `/.well-known/openid-configuration/t/${ws}`,
    ]) {
      expect((await call(h, path)).status, path).toBe(599);
    }
  });
});
