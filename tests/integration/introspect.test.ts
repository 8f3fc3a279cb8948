import { beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { decodeJwt } from "jose";
import { clientSecrets, grants, refreshTokens } from "../../db/schema";
import { newId, sha256Hex } from "../../lib/crypto";
import { basic, call, createHarness, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, API, M2M, MINIMAL, SPA, WEB, standardWorkspace } from "../helpers/fixtures";
import { humanTokens, insertWorkloadToken } from "../helpers/lifecycle";

let h: Harness;
const ws = uniqueWorkspaceId("introspect");
const issuer = `${PUBLIC_URL}/t/${ws}`;
const HOUR = 3600_000;
const DAY = 24 * HOUR;

/** The standard workspace, with the confidential web app also granted the API. */
function workspace() {
  const doc = standardWorkspace(ws);
  doc.api_grants.push({ client_id: WEB.client_id, audience: API, permissions: ["read:things"] });
  return doc;
}

beforeAll(async () => {
  h = await createHarness();
  await seed(h, workspace());
});

const ACTIVE_FIELDS = ["active", "aud", "client_id", "exp", "iss", "scope", "sub", "token_type"];
const nowSeconds = () => Math.floor(h.clock.now().getTime() / 1000);
const webTokens = (options: { scope?: string; resource?: string } = {}) => humanTokens(h, ws, WEB, ADA, options);
const introspect = (form: Record<string, string> | string, headers: Record<string, string> = {}) => call(h, `/t/${ws}/oauth2/introspect`, { form, headers });
const asWeb = (token: string, extra: Record<string, string> = {}) => introspect({ token, ...extra }, { authorization: basic(WEB.client_id, WEB.secret) });
const asM2M = (token: string, extra: Record<string, string> = {}) => introspect({ token, ...extra }, { authorization: basic(M2M.client_id, M2M.secret) });
const refreshWeb = (rt: string) => call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: rt }, headers: { authorization: basic(WEB.client_id, WEB.secret) } });

async function expectInactive(res: Response) {
  expect(res.status).toBe(200);
  expect(res.headers.get("cache-control")).toBe("no-store");
  expect(await res.json()).toEqual({ active: false });
}

describe("POST /oauth2/introspect: the client's own access tokens", () => {
  it("answers exactly active, client_id, sub, iss, aud, scope, exp, token_type, with no-store", async () => {
    const t = await webTokens();
    const res = await asWeb(t.access_token);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(ACTIVE_FIELDS);
    expect(body).toEqual({
      active: true,
      client_id: WEB.client_id,
      sub: decodeJwt(t.id_token).sub,
      iss: issuer,
      aud: WEB.client_id, // no API audience: the client itself
      scope: "openid email profile",
      exp: nowSeconds() + 300,
      token_type: "Bearer",
    });
  });

  it("gives the API audience as aud and the granted permissions in scope, and no role or profile data", async () => {
    const t = await webTokens({ scope: "openid read:things", resource: API });
    expect(t.scope).toBe("openid read:things");
    const body = await (await asWeb(t.access_token, { token_type_hint: "access_token" })).json();
    expect(body).toMatchObject({ active: true, aud: API, scope: "openid read:things", token_type: "Bearer" });
    expect(Object.keys(body).sort()).toEqual(ACTIVE_FIELDS);
    for (const field of ["roles", "permissions", "email", "name", "principal_type", "username"]) expect(body).not.toHaveProperty(field);
  });

  it("accepts a matching body client_id alongside Basic", async () => {
    const t = await webTokens();
    expect((await (await asWeb(t.access_token, { client_id: WEB.client_id })).json()).active).toBe(true);
  });

  it("is inactive once the access token expires (5 minutes)", async () => {
    const t = await webTokens();
    h.clock.advance(299_000);
    expect((await (await asWeb(t.access_token)).json()).active).toBe(true);
    h.clock.advance(2_000);
    await expectInactive(await asWeb(t.access_token));
  });

  it("is inactive once the grant is revoked", async () => {
    const t = await webTokens();
    const revoked = await call(h, `/t/${ws}/oauth2/revoke`, { form: { token: t.refresh_token }, headers: { authorization: basic(WEB.client_id, WEB.secret) } });
    expect(revoked.status).toBe(200);
    await expectInactive(await asWeb(t.access_token));
    await expectInactive(await asWeb(t.refresh_token));
  });

  it("is inactive once the hosted session ends (12 hours idle)", async () => {
    const t = await webTokens();
    // The access token is still within its 5 minutes but its session has gone idle.
    h.clock.advance(12 * HOUR + 1);
    await expectInactive(await asWeb(t.access_token));
    await expectInactive(await asWeb(t.refresh_token));
  });

  it("is inactive for a token whose user was disabled", async () => {
    const t = await webTokens();
    const doc = workspace();
    doc.users[0] = { ...doc.users[0], status: "disabled" };
    await seed(h, doc);
    try {
      await expectInactive(await asWeb(t.access_token));
    } finally {
      await seed(h, workspace());
    }
  });
});

describe("POST /oauth2/introspect: anything not the client's own is inactive", () => {
  it("another client's access and refresh tokens", async () => {
    const spa = await humanTokens(h, ws, SPA, ADA);
    await expectInactive(await asWeb(spa.access_token));
    await expectInactive(await asWeb(spa.refresh_token));
    await expectInactive(await asM2M(spa.access_token));
    const web = await webTokens();
    await expectInactive(await asM2M(web.access_token));
    await expectInactive(await asM2M(web.refresh_token));
    // Still active for its owner: the answer above is about ownership, not liveness.
    expect((await (await asWeb(web.access_token)).json()).active).toBe(true);
  });

  it("a workload token of another client", async () => {
    const { token } = await insertWorkloadToken(h, ws, M2M.client_id);
    await expectInactive(await asWeb(token));
    expect((await (await asM2M(token)).json()).active).toBe(true);
  });

  it("unknown tokens, whatever they look like", async () => {
    for (const token of ["lka_unknown", "lkr_unknown", "not-a-token", "a".repeat(500)]) await expectInactive(await asWeb(token));
    await expectInactive(await asWeb("lkr_unknown", { token_type_hint: "refresh_token" }));
  });

  it("a token of the same client id in another workspace", async () => {
    const other = uniqueWorkspaceId("introspect-other");
    const doc = standardWorkspace(other);
    await seed(h, doc);
    const t = await humanTokens(h, other, WEB, ADA);
    await expectInactive(await asWeb(t.access_token));
    const own = await call(h, `/t/${other}/oauth2/introspect`, { form: { token: t.access_token }, headers: { authorization: basic(WEB.client_id, WEB.secret) } });
    expect((await own.json()).active).toBe(true);
  });
});

describe("POST /oauth2/introspect: workload (M2M) tokens", () => {
  it("adds principal_type workload and uses the API audience", async () => {
    const { token } = await insertWorkloadToken(h, ws, M2M.client_id, { scope: ["read:things"] });
    const body = await (await asM2M(token)).json();
    expect(Object.keys(body).sort()).toEqual([...ACTIVE_FIELDS, "principal_type"].sort());
    expect(body).toEqual({
      active: true,
      client_id: M2M.client_id,
      sub: M2M.client_id,
      iss: issuer,
      aud: API,
      scope: "read:things",
      exp: nowSeconds() + 300,
      token_type: "Bearer",
      principal_type: "workload",
    });
  });

  it("works for a token from the real client_credentials grant, until that token is revoked", async () => {
    const issued = await call(h, `/t/${ws}/oauth2/token`, {
      form: { grant_type: "client_credentials", resource: API, scope: "read:things" },
      headers: { authorization: basic(M2M.client_id, M2M.secret) },
    });
    expect(issued.status).toBe(200);
    const { access_token } = await issued.json();
    expect(await (await asM2M(access_token)).json()).toEqual({
      active: true,
      client_id: M2M.client_id,
      sub: M2M.client_id,
      iss: issuer,
      aud: API,
      scope: "read:things",
      exp: nowSeconds() + 300,
      token_type: "Bearer",
      principal_type: "workload",
    });
    await expectInactive(await asWeb(access_token));
    const revoked = await call(h, `/t/${ws}/oauth2/revoke`, { form: { token: access_token }, headers: { authorization: basic(M2M.client_id, M2M.secret) } });
    expect(revoked.status).toBe(200);
    await expectInactive(await asM2M(access_token));
  });

  it("is inactive once the credential that obtained it is revoked or has expired", async () => {
    const { token, credentialId } = await insertWorkloadToken(h, ws, M2M.client_id);
    const [cred] = await h.service.db.select().from(clientSecrets).where(eq(clientSecrets.id, credentialId));
    // A second active secret lets the client keep authenticating while the first one changes.
    const second = { id: newId(), secret: "m2m-second-secret-0123456789abcdef0123456789" };
    await h.service.db.insert(clientSecrets).values({
      id: second.id,
      workspaceId: ws,
      clientPk: cred.clientPk,
      secretHash: sha256Hex(second.secret),
      createdAt: h.clock.now(),
      expiresAt: new Date(h.clock.now().getTime() + 90 * DAY),
    });
    const viaSecond = (t: string) => introspect({ token: t }, { authorization: basic(M2M.client_id, second.secret) });
    try {
      expect((await (await viaSecond(token)).json()).active).toBe(true);
      await h.service.db.update(clientSecrets).set({ revokedAt: h.clock.now() }).where(eq(clientSecrets.id, cred.id));
      await expectInactive(await viaSecond(token));
      await h.service.db.update(clientSecrets).set({ revokedAt: null, expiresAt: h.clock.now() }).where(eq(clientSecrets.id, cred.id));
      await expectInactive(await viaSecond(token));
    } finally {
      await h.service.db.update(clientSecrets).set({ revokedAt: cred.revokedAt, expiresAt: cred.expiresAt }).where(eq(clientSecrets.id, cred.id));
      await h.service.db.delete(clientSecrets).where(eq(clientSecrets.id, second.id));
    }
  });

  it("is inactive after its own revocation and after 5 minutes", async () => {
    const a = await insertWorkloadToken(h, ws, M2M.client_id);
    const b = await insertWorkloadToken(h, ws, M2M.client_id);
    expect((await call(h, `/t/${ws}/oauth2/revoke`, { form: { token: a.token }, headers: { authorization: basic(M2M.client_id, M2M.secret) } })).status).toBe(200);
    await expectInactive(await asM2M(a.token));
    expect((await (await asM2M(b.token)).json()).active).toBe(true);
    h.clock.advance(301_000);
    await expectInactive(await asM2M(b.token));
  });
});

describe("POST /oauth2/introspect: refresh tokens", () => {
  it("are active while current, with token_type refresh_token (never Bearer)", async () => {
    const t = await webTokens({ scope: "openid email read:things", resource: API });
    const res = await asWeb(t.refresh_token);
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(ACTIVE_FIELDS);
    expect(body).toEqual({
      active: true,
      client_id: WEB.client_id,
      sub: decodeJwt(t.id_token).sub,
      iss: issuer,
      aud: API,
      scope: "openid email read:things",
      exp: nowSeconds() + 7 * 24 * 3600, // the family's inactivity bound comes first
      token_type: "refresh_token",
    });
    // The hint only orders the search.
    expect((await (await asWeb(t.refresh_token, { token_type_hint: "access_token" })).json()).token_type).toBe("refresh_token");
    expect((await (await asWeb(t.access_token, { token_type_hint: "refresh_token" })).json()).token_type).toBe("Bearer");
  });

  it("the superseded token is inactive after rotation; the replacement is active", async () => {
    const t = await webTokens();
    const rotated = await (await refreshWeb(t.refresh_token)).json();
    expect(rotated.refresh_token).toBeTruthy();
    await expectInactive(await asWeb(t.refresh_token));
    expect((await (await asWeb(rotated.refresh_token)).json()).active).toBe(true);
  });

  it("are inactive once the family passes its inactivity or absolute bound", async () => {
    for (const bound of ["idleExpiresAt", "absoluteExpiresAt"] as const) {
      const t = await webTokens();
      expect((await (await asWeb(t.refresh_token)).json()).active).toBe(true);
      const [row] = await h.service.db.select({ grantId: refreshTokens.grantId }).from(refreshTokens).where(eq(refreshTokens.tokenHash, sha256Hex(t.refresh_token)));
      await h.service.db.update(grants).set({ [bound]: h.clock.now() }).where(eq(grants.id, row.grantId));
      await expectInactive(await asWeb(t.refresh_token));
    }
  });
});

describe("POST /oauth2/introspect: client authentication and the request", () => {
  it("refuses a public client (body client_id, no Basic) with 401 invalid_client", async () => {
    const t = await humanTokens(h, ws, SPA, ADA);
    for (const clientId of [SPA.client_id, MINIMAL.client_id]) {
      const res = await introspect({ token: t.access_token, client_id: clientId });
      expect(res.status).toBe(401);
      expect((await res.json()).error).toBe("invalid_client");
      expect(res.headers.get("www-authenticate")).toMatch(/^Basic/);
    }
    const publicBasic = await introspect({ token: t.access_token }, { authorization: basic(SPA.client_id, "") });
    expect(publicBasic.status).toBe(401);
  });

  it("refuses a request without authentication, a wrong secret or an unknown client (401)", async () => {
    const t = await webTokens();
    expect((await introspect({ token: t.access_token })).status).toBe(401);
    expect((await introspect({ token: t.access_token, client_id: WEB.client_id })).status).toBe(401);
    expect((await introspect({ token: t.access_token }, { authorization: basic(WEB.client_id, "wrong") })).status).toBe(401);
    expect((await introspect({ token: t.access_token }, { authorization: basic("nobody", "x") })).status).toBe(401);
    expect((await introspect({ token: t.access_token }, { authorization: `Bearer ${t.access_token}` })).status).toBe(401);
  });

  it("checks the client before the request: no token and a bad secret is 401, not 400", async () => {
    const res = await introspect({ token_type_hint: "access_token" }, { authorization: basic(WEB.client_id, "wrong") });
    expect(res.status).toBe(401);
  });

  it("refuses body client_secret, a mismatched body client_id, and a browser Origin", async () => {
    const t = await webTokens();
    const secretInBody = await introspect({ token: t.access_token, client_id: WEB.client_id, client_secret: WEB.secret });
    expect(secretInBody.status).toBe(400);
    expect((await secretInBody.json()).error).toBe("invalid_request");
    const withBoth = await asWeb(t.access_token, { client_secret: WEB.secret });
    expect(withBoth.status).toBe(400);
    const mismatch = await asWeb(t.access_token, { client_id: SPA.client_id });
    expect(mismatch.status).toBe(400);
    const browser = await introspect({ token: t.access_token }, { authorization: basic(WEB.client_id, WEB.secret), origin: "https://web.example.test" });
    expect(browser.status).toBe(403);
  });

  it("requires token; refuses unknown hints, duplicates and unknown parameters (400)", async () => {
    const t = await webTokens();
    const forms: (Record<string, string> | string)[] = [
      {},
      { token: "" },
      { token: t.access_token, token_type_hint: "id_token" },
      { token: t.access_token, scope: "openid" },
      `token=${t.access_token}&token=${t.access_token}`,
    ];
    for (const form of forms) {
      const res = await introspect(form, { authorization: basic(WEB.client_id, WEB.secret) });
      expect(res.status, JSON.stringify(form)).toBe(400);
      expect((await res.json()).error).toBe("invalid_request");
    }
  });

  it("requires a form body (415) of at most 8 KiB (413); only POST (405)", async () => {
    const auth = { authorization: basic(WEB.client_id, WEB.secret) };
    expect((await call(h, `/t/${ws}/oauth2/introspect`, { method: "POST", body: '{"token":"x"}', headers: { ...auth, "content-type": "application/json" } })).status).toBe(415);
    expect((await introspect({ token: "x".repeat(9000) }, auth)).status).toBe(413);
    expect((await call(h, `/t/${ws}/oauth2/introspect?token=x`, { headers: auth })).status).toBe(405);
  });
});
