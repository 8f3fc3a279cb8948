import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { clients, grants, hostedSessions, organizationMembers, organizations, users } from "../../db/schema";
import { createService } from "../../lib/service";
import { revokeClientSecret, rotateClientSecret, listClientSecrets } from "../../lib/clients/secrets";
import { assignUserRole, organizationIds, removeUserRole, setApiGrant } from "../../lib/authz/model";
import { openOwnTestDatabase } from "../setup/test-database";
import { basic, call, createHarness, exchangeCode, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ACME, ADA, API, authzWorkspace, BOB, GLOBEX, M2M, OTHER_API, SPA, WEB } from "../helpers/fixtures";

let h: Harness;
const ws = uniqueWorkspaceId("check");
let orgs: Map<string, string>;
let adaId: string;

beforeAll(async () => {
  h = await createHarness();
  await seed(h, authzWorkspace(ws));
  orgs = await organizationIds(h.service.db, ws, [ACME, GLOBEX]);
  const [ada] = await h.service.db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, ADA.email)));
  adaId = ada.id;
});

interface CheckOptions {
  workspace?: string;
  query?: string;
  headers?: Record<string, string>;
  raw?: string;
}

function check(token: string | null, body: unknown, options: CheckOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json", ...options.headers };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  return call(h, `/t/${options.workspace ?? ws}/authorization/check${options.query ?? ""}`, {
    method: "POST",
    body: options.raw ?? JSON.stringify(body),
    headers,
  });
}

/** The decision of a well-formed check: 200 with exactly {allowed: boolean}. */
async function allowed(token: string, resource: string, permission: string, organizationId: string | null = null): Promise<boolean> {
  const res = await check(token, { resource, permission, organization_id: organizationId });
  expect(res.status, await res.clone().text()).toBe(200);
  expect(res.headers.get("cache-control")).toBe("no-store");
  const body = await res.json();
  expect(Object.keys(body)).toEqual(["allowed"]);
  expect(typeof body.allowed).toBe("boolean");
  return body.allowed;
}

async function expectProblem(res: Response, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.headers.get("cache-control")).toBe("no-store");
  const body = await res.json();
  // Its own shape, not the OAuth {error, error_description}.
  expect(body).toEqual({ type: expect.stringMatching(/^urn:latchkey:authorization-check:/), title: expect.any(String), status, detail: expect.any(String) });
  expect(body.allowed).toBeUndefined();
}

/** Signs Ada (or another user) in to the SPA for API; optionally in an organization session. */
async function humanToken(
  options: { scope?: string; user?: { email: string; password: string }; organization?: string; resource?: string | null } = {},
): Promise<{ access_token: string; scope: string; sessionId: string; refresh_token: string }> {
  const resource = options.resource === undefined ? API : options.resource;
  const r = await signIn(h, ws, {
    ...SPA,
    ...(options.user ?? ADA),
    scope: options.scope ?? "openid read:things write:things admin:things",
    ...(resource ? { resource } : {}),
  });
  const sessionId = r.jar.get("lk_session")!.split(".")[0];
  if (options.organization) {
    // Enterprise sign-in records the session's organization; set it directly here.
    await h.service.db.update(hostedSessions).set({ organizationId: orgs.get(options.organization)! }).where(eq(hostedSessions.id, sessionId));
  }
  const res = await exchangeCode(h, ws, { code: r.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: r.verifier, client_id: SPA.client_id });
  expect(res.status).toBe(200);
  return { ...(await res.json()), sessionId };
}

async function m2mToken(scope = "read:things", secret = M2M.secret, workspace = ws): Promise<string> {
  const res = await call(h, `/t/${workspace}/oauth2/token`, {
    form: { grant_type: "client_credentials", resource: API, scope },
    headers: { authorization: basic(M2M.client_id, secret) },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()).access_token;
}

const change = () => ({ workspaceId: ws, clock: h.clock });

describe("POST /authorization/check: human tokens", () => {
  it("allows a permission in the token's scope that the user holds through a workspace role", async () => {
    const t = await humanToken();
    expect(t.scope).toBe("openid read:things write:things");
    expect(await allowed(t.access_token, API, "read:things")).toBe(true);
    expect(await allowed(t.access_token, API, "write:things")).toBe(true);
  });

  it("denies a resource other than the token's audience", async () => {
    const t = await humanToken();
    expect(await allowed(t.access_token, OTHER_API, "read:things")).toBe(false);
    expect(await allowed(t.access_token, `${API}/`, "read:things")).toBe(false);
  });

  it("denies a permission the user holds but the token's scope lacks", async () => {
    const t = await humanToken({ scope: "openid read:things" });
    expect(await allowed(t.access_token, API, "read:things")).toBe(true);
    expect(await allowed(t.access_token, API, "write:things")).toBe(false);
  });

  it("denies a permission in no role, and identity scopes", async () => {
    const t = await humanToken();
    expect(await allowed(t.access_token, API, "admin:things")).toBe(false);
    expect(await allowed(t.access_token, API, "openid")).toBe(false);
    expect(await allowed(t.access_token, API, "unknown:things")).toBe(false);
  });

  it("denies everything to an identity-only token (no resource)", async () => {
    const t = await humanToken({ scope: "openid", resource: null });
    expect(await allowed(t.access_token, API, "read:things")).toBe(false);
  });

  it("sees a role removed at the very next check, and restored again", async () => {
    const t = await humanToken();
    expect(await allowed(t.access_token, API, "write:things")).toBe(true);
    expect(await removeUserRole(h.service.db, { ...change(), userId: adaId, role: "writer", organization: null })).toBe(true);
    expect(await allowed(t.access_token, API, "write:things")).toBe(false);
    expect(await allowed(t.access_token, API, "read:things")).toBe(true);
    expect(await assignUserRole(h.service.db, { ...change(), userId: adaId, role: "writer", organization: null })).toBe(true);
    expect(await allowed(t.access_token, API, "write:things")).toBe(true);
  });

  it("denies once the client's API grant no longer includes the permission", async () => {
    const t = await humanToken();
    await setApiGrant(h.service.db, { ...change(), clientId: SPA.client_id, audience: API, permissions: ["write:things", "admin:things"] });
    try {
      expect(await allowed(t.access_token, API, "read:things")).toBe(false);
      expect(await allowed(t.access_token, API, "write:things")).toBe(true);
    } finally {
      await setApiGrant(h.service.db, { ...change(), clientId: SPA.client_id, audience: API, permissions: ["read:things", "write:things", "admin:things"] });
    }
    expect(await allowed(t.access_token, API, "read:things")).toBe(true);
  });

  describe("organizations", () => {
    it("allows a permission held through a role in the session's organization", async () => {
      const t = await humanToken({ organization: ACME });
      expect(t.scope).toBe("openid read:things admin:things");
      expect(await allowed(t.access_token, API, "admin:things", orgs.get(ACME)!)).toBe(true);
      expect(await allowed(t.access_token, API, "read:things", orgs.get(ACME)!)).toBe(true);
      // At workspace level Ada holds read:things but not admin:things.
      expect(await allowed(t.access_token, API, "read:things", null)).toBe(true);
      expect(await allowed(t.access_token, API, "admin:things", null)).toBe(false);
    });

    it("denies an organization other than the session's, even where the user holds the role", async () => {
      await assignUserRole(h.service.db, { ...change(), userId: adaId, role: "admin", organization: GLOBEX });
      try {
        const t = await humanToken({ organization: ACME });
        expect(await allowed(t.access_token, API, "admin:things", orgs.get(GLOBEX)!)).toBe(false);
        const g = await humanToken({ organization: GLOBEX });
        expect(await allowed(g.access_token, API, "admin:things", orgs.get(GLOBEX)!)).toBe(true);
      } finally {
        await removeUserRole(h.service.db, { ...change(), userId: adaId, role: "admin", organization: GLOBEX });
      }
    });

    it("denies an organization to a session that has none, and an unknown organization id", async () => {
      const t = await humanToken();
      expect(await allowed(t.access_token, API, "read:things", orgs.get(ACME)!)).toBe(false);
      expect(await allowed(t.access_token, API, "read:things", "no-such-organization")).toBe(false);
    });

    it("denies a role held at workspace level when the check names the organization", async () => {
      // Ada holds write:things only at workspace level, not in acme.
      const t = await humanToken({ organization: ACME, scope: "openid write:things admin:things" });
      expect(t.scope).toBe("openid admin:things");
      const w = await humanToken({ scope: "openid write:things" });
      await h.service.db.update(hostedSessions).set({ organizationId: orgs.get(ACME)! }).where(eq(hostedSessions.id, w.sessionId));
      expect(await allowed(w.access_token, API, "write:things", null)).toBe(true);
      expect(await allowed(w.access_token, API, "write:things", orgs.get(ACME)!)).toBe(false);
    });

    it("denies once the user is no longer a member of the session's organization", async () => {
      const t = await humanToken({ organization: ACME });
      const acme = orgs.get(ACME)!;
      const member = and(eq(organizationMembers.organizationId, acme), eq(organizationMembers.userId, adaId));
      const [row] = await h.service.db.select().from(organizationMembers).where(member);
      // Only the membership goes; the role row stays, so membership is the single reason.
      await h.service.db.delete(organizationMembers).where(member);
      try {
        expect(await allowed(t.access_token, API, "admin:things", acme)).toBe(false);
        expect(await allowed(t.access_token, API, "read:things", null)).toBe(false);
      } finally {
        await h.service.db.insert(organizationMembers).values(row);
      }
      expect(await allowed(t.access_token, API, "admin:things", acme)).toBe(true);
    });

    it("denies while the session's organization is inactive", async () => {
      const t = await humanToken({ organization: ACME });
      const acme = orgs.get(ACME)!;
      await h.service.db.update(organizations).set({ active: false }).where(eq(organizations.id, acme));
      try {
        expect(await allowed(t.access_token, API, "admin:things", acme)).toBe(false);
      } finally {
        await h.service.db.update(organizations).set({ active: true }).where(eq(organizations.id, acme));
      }
      expect(await allowed(t.access_token, API, "admin:things", acme)).toBe(true);
    });

    it("keeps one user's organization roles from another user", async () => {
      const b = await humanToken({ user: BOB, organization: GLOBEX, scope: "openid read:things" });
      expect(await allowed(b.access_token, API, "read:things", orgs.get(GLOBEX)!)).toBe(true);
      expect(await allowed(b.access_token, API, "read:things", null)).toBe(false);
    });
  });

  describe("authority that is no longer current answers 401", () => {
    it("an expired token (5 minutes)", async () => {
      const t = await humanToken();
      h.clock.advance(299_000);
      expect(await allowed(t.access_token, API, "read:things")).toBe(true);
      h.clock.advance(2_000);
      await expectProblem(await check(t.access_token, { resource: API, permission: "read:things", organization_id: null }), 401);
    });

    it("an ended session", async () => {
      const t = await humanToken();
      await h.service.db.update(hostedSessions).set({ endedAt: h.clock.now(), endReason: "test" }).where(eq(hostedSessions.id, t.sessionId));
      await expectProblem(await check(t.access_token, { resource: API, permission: "read:things", organization_id: null }), 401);
    });

    it("a revoked grant", async () => {
      const t = await humanToken();
      await h.service.db.update(grants).set({ revokedAt: h.clock.now() }).where(eq(grants.sessionId, t.sessionId));
      await expectProblem(await check(t.access_token, { resource: API, permission: "read:things", organization_id: null }), 401);
    });

    it("a disabled user", async () => {
      const t = await humanToken();
      await h.service.db.update(users).set({ status: "disabled" }).where(eq(users.id, adaId));
      try {
        await expectProblem(await check(t.access_token, { resource: API, permission: "read:things", organization_id: null }), 401);
      } finally {
        await h.service.db.update(users).set({ status: "active" }).where(eq(users.id, adaId));
      }
    });

    it("a deactivated client", async () => {
      const t = await humanToken();
      const spa = and(eq(clients.workspaceId, ws), eq(clients.clientId, SPA.client_id));
      await h.service.db.update(clients).set({ active: false }).where(spa);
      try {
        await expectProblem(await check(t.access_token, { resource: API, permission: "read:things", organization_id: null }), 401);
      } finally {
        await h.service.db.update(clients).set({ active: true }).where(spa);
      }
    });

    it("a token of another workspace, and an unknown token", async () => {
      const t = await humanToken();
      const other = uniqueWorkspaceId("check-other");
      await seed(h, authzWorkspace(other));
      await expectProblem(await check(t.access_token, { resource: API, permission: "read:things", organization_id: null }, { workspace: other }), 401);
      await expectProblem(await check("lka_unknown", { resource: API, permission: "read:things", organization_id: null }), 401);
    });

    it("a missing or non-Bearer Authorization header", async () => {
      const body = { resource: API, permission: "read:things", organization_id: null };
      await expectProblem(await check(null, body), 401);
      await expectProblem(await check(null, body, { headers: { authorization: basic(M2M.client_id, M2M.secret) } }), 401);
      const res = await check(null, body);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer /);
    });
  });
});

describe("POST /authorization/check: workload (M2M) tokens", () => {
  it("allows a permission in scope that the grant still includes, at workspace level", async () => {
    const token = await m2mToken("read:things write:things");
    expect(await allowed(token, API, "read:things")).toBe(true);
    expect(await allowed(token, API, "write:things")).toBe(true);
  });

  it("denies any organization", async () => {
    const token = await m2mToken();
    expect(await allowed(token, API, "read:things", orgs.get(ACME)!)).toBe(false);
  });

  it("denies a permission the grant includes but the token's scope lacks", async () => {
    const token = await m2mToken("read:things");
    expect(await allowed(token, API, "write:things")).toBe(false);
  });

  it("denies a resource other than the token's audience", async () => {
    const token = await m2mToken();
    expect(await allowed(token, OTHER_API, "read:things")).toBe(false);
  });

  it("sees a grant change at the very next check", async () => {
    const token = await m2mToken("read:things write:things");
    await setApiGrant(h.service.db, { ...change(), clientId: M2M.client_id, audience: API, permissions: ["write:things"] });
    try {
      expect(await allowed(token, API, "read:things")).toBe(false);
      expect(await allowed(token, API, "write:things")).toBe(true);
    } finally {
      await setApiGrant(h.service.db, { ...change(), clientId: M2M.client_id, audience: API, permissions: ["read:things", "write:things"] });
    }
    expect(await allowed(token, API, "read:things")).toBe(true);
  });

  it("answers 401 once the credential that obtained the token is revoked", async () => {
    const local = uniqueWorkspaceId("check-rev");
    await seed(h, authzWorkspace(local));
    const token = await m2mToken("read:things", M2M.secret, local);
    const body = { resource: API, permission: "read:things", organization_id: null };
    expect((await check(token, body, { workspace: local })).status).toBe(200);
    const [secret] = await listClientSecrets(h.service.db, { workspaceId: local, clientId: M2M.client_id, clock: h.clock });
    await revokeClientSecret(h.service.db, { workspaceId: local, clientId: M2M.client_id, secretId: secret.id, clock: h.clock });
    await expectProblem(await check(token, body, { workspace: local }), 401);
  });

  it("answers 401 for tokens of a secret replaced immediately", async () => {
    const local = uniqueWorkspaceId("check-imm");
    await seed(h, authzWorkspace(local));
    const old = await m2mToken("read:things", M2M.secret, local);
    const body = { resource: API, permission: "read:things", organization_id: null };
    const rotated = await rotateClientSecret(h.service.db, { workspaceId: local, clientId: M2M.client_id, overlapHours: 0, clock: h.clock });
    await expectProblem(await check(old, body, { workspace: local }), 401);
    const fresh = await m2mToken("read:things", rotated.secret, local);
    expect((await (await check(fresh, body, { workspace: local })).json()).allowed).toBe(true);
  });

  it("keeps tokens of the old secret during a rotation overlap, and ends them when it expires", async () => {
    const local = uniqueWorkspaceId("check-ovl");
    await seed(h, authzWorkspace(local));
    const body = { resource: API, permission: "read:things", organization_id: null };
    const rotated = await rotateClientSecret(h.service.db, { workspaceId: local, clientId: M2M.client_id, overlapHours: 1, clock: h.clock });
    // Both secrets obtain tokens during the overlap.
    h.clock.advance(3600_000 - 60_000);
    const old = await m2mToken("read:things", M2M.secret, local);
    const fresh = await m2mToken("read:things", rotated.secret, local);
    expect((await (await check(old, body, { workspace: local })).json()).allowed).toBe(true);
    expect((await (await check(fresh, body, { workspace: local })).json()).allowed).toBe(true);
    // The old secret expires while its token is still within its five minutes.
    h.clock.advance(60_000);
    await expectProblem(await check(old, body, { workspace: local }), 401);
    expect((await (await check(fresh, body, { workspace: local })).json()).allowed).toBe(true);
    const denied = await call(h, `/t/${local}/oauth2/token`, {
      form: { grant_type: "client_credentials", resource: API, scope: "read:things" },
      headers: { authorization: basic(M2M.client_id, M2M.secret) },
    });
    expect(denied.status).toBe(401);
  });

  it("answers 401 once the M2M client is deactivated", async () => {
    const local = uniqueWorkspaceId("check-cli");
    await seed(h, authzWorkspace(local));
    const token = await m2mToken("read:things", M2M.secret, local);
    await h.service.db.update(clients).set({ active: false }).where(and(eq(clients.workspaceId, local), eq(clients.clientId, M2M.client_id)));
    await expectProblem(await check(token, { resource: API, permission: "read:things", organization_id: null }, { workspace: local }), 401);
  });
});

describe("POST /authorization/check: request rules", () => {
  let token: string;
  const good = { resource: API, permission: "read:things", organization_id: null };
  beforeAll(async () => {
    token = await m2mToken();
  });

  it("accepts organization_id as a string or null", async () => {
    expect((await check(token, good)).status).toBe(200);
    expect((await check(token, { ...good, organization_id: "org" })).status).toBe(200);
    expect((await check(token, good, { headers: { "content-type": "application/json; charset=utf-8" } })).status).toBe(200);
  });

  it("answers 400 to a body with an extra, missing, duplicated or mistyped member", async () => {
    const bad: unknown[] = [
      { ...good, extra: true },
      { ...good, allowed: true },
      { resource: API, permission: "read:things" },
      { resource: API, organization_id: null },
      { permission: "read:things", organization_id: null },
      { ...good, organization_id: 42 },
      { ...good, organization_id: ["org"] },
      { ...good, organization_id: "" },
      { ...good, permission: ["read:things"] },
      { ...good, permission: null },
      { ...good, resource: { href: API } },
      { ...good, resource: "" },
      [good],
      null,
      "read:things",
      {},
    ];
    for (const body of bad) await expectProblem(await check(token, body), 400);
    // Duplicate members, which JSON.parse would silently collapse.
    const duplicated = `{"resource":${JSON.stringify(API)},"permission":"admin:things","permission":"read:things","organization_id":null}`;
    await expectProblem(await check(token, null, { raw: duplicated }), 400);
    const nested = `{"resource":${JSON.stringify(API)},"permission":"read:things","organization_id":null,"x":{"resource":1}}`;
    await expectProblem(await check(token, null, { raw: nested }), 400);
    await expectProblem(await check(token, null, { raw: "{not json" }), 400);
    await expectProblem(await check(token, null, { raw: "" }), 400);
  });

  it("treats member names inside strings and escapes correctly", async () => {
    const raw = `{ "resource" : ${JSON.stringify(API)} , "permission":"read:things",\n"organization_id" : null }`;
    expect((await check(token, null, { raw })).status).toBe(200);
    const escaped = `{"resource":${JSON.stringify(API)},"permission":"read:things","organization_id":"a\\"b:\\\\"}`;
    expect((await check(token, null, { raw: escaped })).status).toBe(200);
    const unicode = `{"resource":${JSON.stringify(API)},"permission":"read:things","organization\\u005fid":null}`;
    expect((await check(token, null, { raw: unicode })).status).toBe(200);
  });

  it("accepts a 2 KiB body and answers 413 to 2 KiB + 1", async () => {
    const base = JSON.stringify({ ...good, organization_id: "" });
    const exact = JSON.stringify({ ...good, organization_id: "x".repeat(2048 - base.length) });
    expect(Buffer.byteLength(exact)).toBe(2048);
    const ok = await check(token, null, { raw: exact });
    expect(ok.status).toBe(200);
    expect((await ok.json()).allowed).toBe(false);
    const over = JSON.stringify({ ...good, organization_id: "x".repeat(2049 - base.length) });
    expect(Buffer.byteLength(over)).toBe(2049);
    await expectProblem(await check(token, null, { raw: over }), 413);
  });

  it("answers 400 to a query string, even an empty one", async () => {
    await expectProblem(await check(token, good, { query: "?permission=read:things" }), 400);
    await expectProblem(await check(token, good, { query: "?" }), 400);
  });

  it("answers 400 to an Origin header", async () => {
    await expectProblem(await check(token, good, { headers: { origin: "https://app.example.test" } }), 400);
    await expectProblem(await check(token, good, { headers: { origin: "null" } }), 400);
  });

  it("answers 415 to a body that is not application/json", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/jsonx", "multipart/form-data; boundary=x"]) {
      await expectProblem(await check(token, good, { headers: { "content-type": type } }), 415);
    }
    const noType = await call(h, `/t/${ws}/authorization/check`, { method: "POST", body: JSON.stringify(good), headers: { authorization: `Bearer ${token}` } });
    // fetch's Request gives a string body text/plain; an absent type must fail the same way.
    await expectProblem(noType, 415);
  });

  it("checks the request before the token: a malformed request with a bad token is 400", async () => {
    await expectProblem(await check("lka_unknown", { ...good, extra: 1 }), 400);
  });

  it("answers 405 to other methods", async () => {
    const res = await call(h, `/t/${ws}/authorization/check`, { method: "GET", headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(405);
  });
});

describe("POST /authorization/check: unavailable authority", () => {
  it("answers 503, never a decision, when the database fails", async () => {
    const handle = await openOwnTestDatabase();
    const broken = { ...h, service: createService(handle.db, h.service.config, h.clock), handle };
    const local = uniqueWorkspaceId("check-503");
    await seed(broken, authzWorkspace(local));
    const tokenRes = await call(broken, `/t/${local}/oauth2/token`, {
      form: { grant_type: "client_credentials", resource: API, scope: "read:things" },
      headers: { authorization: basic(M2M.client_id, M2M.secret) },
    });
    const token = (await tokenRes.json()).access_token;
    const body = JSON.stringify({ resource: API, permission: "read:things", organization_id: null });
    const send = () =>
      call(broken, `/t/${local}/authorization/check`, { method: "POST", body, headers: { "content-type": "application/json", authorization: `Bearer ${token}` } });
    expect((await (await send()).json()).allowed).toBe(true);
    await handle.close();
    const res = await send();
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBeTruthy();
    expect(JSON.stringify(await res.json())).not.toContain("allowed");
  });
});

describe("web client tokens", () => {
  it("work like any human token", async () => {
    const r = await signIn(h, ws, { ...WEB, ...ADA, scope: "openid read:things", resource: API });
    const res = await exchangeCode(h, ws, { code: r.callback.searchParams.get("code")!, redirect_uri: WEB.redirect_uri, verifier: r.verifier, authorization: basic(WEB.client_id, WEB.secret) });
    const t = await res.json();
    expect(await allowed(t.access_token, API, "read:things")).toBe(true);
  });
});
