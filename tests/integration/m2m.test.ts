import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { apis, clientSecrets } from "../../db/schema";
import { openWorkloadToken } from "../../lib/oauth/workload-token";
import { sha256Hex } from "../../lib/crypto";
import { createClientSecret } from "../../lib/clients/secrets";
import { authorizeQuery, basic, call, createHarness, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { API, authzWorkspace, M2M, OTHER_API, SPA, WEB, WIDE_API, WIDE_PERMISSIONS } from "../helpers/fixtures";

let h: Harness;
const ws = uniqueWorkspaceId("m2m");
const tokenCall = (form: Record<string, string>, headers: Record<string, string> = {}) => call(h, `/t/${ws}/oauth2/token`, { form, headers });
const m2m = (form: Record<string, string>, secret = M2M.secret) =>
  tokenCall({ grant_type: "client_credentials", ...form }, { authorization: basic(M2M.client_id, secret) });

beforeAll(async () => {
  h = await createHarness();
  await seed(h, authzWorkspace(ws));
});

async function expectError(res: Response, status: number, error: string) {
  expect(res.status).toBe(status);
  const body = await res.json();
  expect(body.error).toBe(error);
  expect(body.access_token).toBeUndefined();
}

describe("grant_type=client_credentials", () => {
  it("answers exactly access_token, token_type Bearer, expires_in 300 and scope, with no-store", async () => {
    const res = await m2m({ resource: API, scope: "read:things" });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(["access_token", "expires_in", "scope", "token_type"]);
    expect(body).toMatchObject({ token_type: "Bearer", expires_in: 300, scope: "read:things" });
    // Sealed (lib/oauth/workload-token.ts): opaque, base64url after its prefix.
    expect(body.access_token).toMatch(/^lkw_[A-Za-z0-9_-]+$/);
  });

  it("grants exactly the requested permissions, in the requested order", async () => {
    const body = await (await m2m({ resource: API, scope: "write:things read:things" })).json();
    expect(body.scope).toBe("write:things read:things");
  });

  it("has its tokens end at once when their API is deactivated", async () => {
    const body = await (await m2m({ resource: API, scope: "read:things" })).json();
    const introspect = async () =>
      (await call(h, `/t/${ws}/oauth2/introspect`, { form: { token: body.access_token }, headers: { authorization: basic(M2M.client_id, M2M.secret) } })).json();
    expect((await introspect()).active).toBe(true);
    const theApi = and(eq(apis.workspaceId, ws), eq(apis.audience, API));
    await h.service.db.update(apis).set({ active: false }).where(theApi);
    try {
      expect(await introspect()).toEqual({ active: false });
    } finally {
      await h.service.db.update(apis).set({ active: true }).where(theApi);
    }
  });

  it("binds the token to the credential that obtained it, with the client_id as subject", async () => {
    const body = await (await m2m({ resource: API, scope: "read:things" })).json();
    const claims = openWorkloadToken(h.service.config.masterKey, ws, null, body.access_token, h.clock.now());
    const [secret] = await h.service.db.select().from(clientSecrets).where(and(eq(clientSecrets.workspaceId, ws), eq(clientSecrets.secretHash, sha256Hex(M2M.secret))));
    expect(claims).toMatchObject({ credentialId: secret.id, scope: ["read:things"] });
    expect(claims!.expiresAt.getTime() - claims!.issuedAt.getTime()).toBe(300_000);
    const introspected = await (
      await call(h, `/t/${ws}/oauth2/introspect`, { form: { token: body.access_token }, headers: { authorization: basic(M2M.client_id, M2M.secret) } })
    ).json();
    expect(introspected).toMatchObject({ active: true, sub: M2M.client_id, client_id: M2M.client_id, principal_type: "workload" });
  });

  it("accepts a matching body client_id with Basic and refuses a different one", async () => {
    expect((await m2m({ resource: API, scope: "read:things", client_id: M2M.client_id })).status).toBe(200);
    await expectError(await m2m({ resource: API, scope: "read:things", client_id: "other" }), 400, "invalid_request");
  });

  it("allows 64 permissions and refuses 65 with invalid_scope", async () => {
    const ok = await m2m({ resource: WIDE_API, scope: WIDE_PERMISSIONS.slice(0, 64).join(" ") });
    expect(ok.status).toBe(200);
    expect((await ok.json()).scope.split(" ")).toHaveLength(64);
    await expectError(await m2m({ resource: WIDE_API, scope: WIDE_PERMISSIONS.slice(0, 65).join(" ") }), 400, "invalid_scope");
  });

  it("refuses identity scopes with invalid_scope", async () => {
    for (const scope of ["openid", "read:things openid", "email", "profile read:things", "offline_access"]) {
      await expectError(await m2m({ resource: API, scope }), 400, "invalid_scope");
    }
  });

  it("refuses a resource that is not granted, unknown or inactive with invalid_scope", async () => {
    await expectError(await m2m({ resource: OTHER_API, scope: "read:other" }), 400, "invalid_scope");
    await expectError(await m2m({ resource: "https://unknown.example.test", scope: "read:things" }), 400, "invalid_scope");
    await expectError(await m2m({ resource: "https://inactive.example.test", scope: "read:inactive" }), 400, "invalid_scope");
  });

  it("refuses a permission the grant does not permit, without narrowing the rest", async () => {
    await expectError(await m2m({ resource: API, scope: "admin:things" }), 400, "invalid_scope");
    await expectError(await m2m({ resource: API, scope: "read:things admin:things" }), 400, "invalid_scope");
    await expectError(await m2m({ resource: API, scope: "read:unknown" }), 400, "invalid_scope");
  });

  it("refuses an empty, malformed or duplicated scope with invalid_scope", async () => {
    await expectError(await m2m({ resource: API }), 400, "invalid_scope");
    await expectError(await m2m({ resource: API, scope: "" }), 400, "invalid_scope");
    await expectError(await m2m({ resource: API, scope: "read:things  write:things" }), 400, "invalid_scope");
    await expectError(await m2m({ resource: API, scope: "read:things read:things" }), 400, "invalid_scope");
  });

  it("requires resource", async () => {
    await expectError(await m2m({ scope: "read:things" }), 400, "invalid_request");
  });

  it("refuses duplicated and unrecognized parameters", async () => {
    const body = `grant_type=client_credentials&resource=${encodeURIComponent(API)}&resource=${encodeURIComponent(API)}&scope=read:things`;
    await expectError(await call(h, `/t/${ws}/oauth2/token`, { form: body, headers: { authorization: basic(M2M.client_id, M2M.secret) } }), 400, "invalid_request");
    await expectError(await m2m({ resource: API, scope: "read:things", audience: API }), 400, "invalid_request");
    await expectError(await m2m({ resource: API, scope: "read:things", refresh_token: "x" }), 400, "invalid_request");
  });

  it("is for M2M clients with HTTP Basic only", async () => {
    // A confidential web client authenticates fine but may not use the grant.
    await expectError(
      await tokenCall({ grant_type: "client_credentials", resource: API, scope: "read:things" }, { authorization: basic(WEB.client_id, WEB.secret) }),
      400,
      "invalid_request",
    );
    // A public client.
    await expectError(await tokenCall({ grant_type: "client_credentials", resource: API, scope: "read:things", client_id: SPA.client_id }), 400, "invalid_request");
    // The M2M client without Basic, or with its secret in the body.
    await expectError(await tokenCall({ grant_type: "client_credentials", resource: API, scope: "read:things", client_id: M2M.client_id }), 401, "invalid_client");
    await expectError(
      await tokenCall({ grant_type: "client_credentials", resource: API, scope: "read:things", client_id: M2M.client_id, client_secret: M2M.secret }),
      400,
      "invalid_request",
    );
  });

  it("refuses a wrong secret with invalid_client", async () => {
    await expectError(await m2m({ resource: API, scope: "read:things" }, "wrong-secret"), 401, "invalid_client");
  });

  it("refuses an expired secret and accepts its successor", async () => {
    const local = uniqueWorkspaceId("m2m-exp");
    await seed(h, authzWorkspace(local));
    const fresh = await createClientSecret(h.service.db, { workspaceId: local, clientId: M2M.client_id, clock: h.clock, lifetimeDays: 1 });
    const req = (secret: string) =>
      call(h, `/t/${local}/oauth2/token`, {
        form: { grant_type: "client_credentials", resource: API, scope: "read:things" },
        headers: { authorization: basic(M2M.client_id, secret) },
      });
    expect((await req(fresh.secret)).status).toBe(200);
    h.clock.advance(24 * 3600_000);
    await expectError(await req(fresh.secret), 401, "invalid_client");
    expect((await req(M2M.secret)).status).toBe(200);
  });
});

describe("M2M clients and the human endpoints", () => {
  it("cannot use the authorize endpoint", async () => {
    const { query } = authorizeQuery({ client_id: M2M.client_id, redirect_uri: SPA.redirect_uri, scope: "openid" });
    const res = await call(h, `/t/${ws}/oauth2/authorize?${query}`);
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
  });

  it("cannot use the authorization_code or refresh_token grants", async () => {
    const auth = { authorization: basic(M2M.client_id, M2M.secret) };
    await expectError(await tokenCall({ grant_type: "authorization_code", code: "x", redirect_uri: SPA.redirect_uri, code_verifier: "a".repeat(43) }, auth), 400, "invalid_request");
    await expectError(await tokenCall({ grant_type: "refresh_token", refresh_token: "x" }, auth), 400, "invalid_request");
  });

  it("is refused before the grant reads its parameters, with the grant's own description", async () => {
    const auth = { authorization: basic(M2M.client_id, M2M.secret) };
    const description = async (res: Response) => {
      expect(res.status).toBe(400);
      const body = await res.json();
      expect(body.error).toBe("invalid_request");
      return body.error_description;
    };
    // No code, no refresh token: the client's refusal comes first all the same.
    expect(await description(await tokenCall({ grant_type: "authorization_code" }, auth))).toBe("This client cannot use the authorization_code grant");
    expect(await description(await tokenCall({ grant_type: "refresh_token" }, auth))).toBe("This client cannot use the refresh_token grant");
    expect(await description(await tokenCall({ grant_type: "client_credentials" }, { authorization: basic(WEB.client_id, WEB.secret) }))).toBe(
      "Only machine-to-machine clients can use the client_credentials grant",
    );
  });

  it("has its tokens refused by UserInfo and the session check", async () => {
    const { access_token } = await (await m2m({ resource: API, scope: "read:things" })).json();
    for (const path of ["/oidc/userinfo", "/oidc/session"]) {
      const res = await call(h, `/t/${ws}${path}`, { headers: { authorization: `Bearer ${access_token}` } });
      expect(res.status).toBe(401);
      expect(JSON.stringify(await res.json())).not.toContain(M2M.client_id);
    }
  });
});
