import { beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import { call, createHarness, exchangeCode, PUBLIC_URL, seed, signIn, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, SPA, standardWorkspace } from "../helpers/fixtures";

let h: Harness;
const ws = uniqueWorkspaceId("sess");
const issuer = `${PUBLIC_URL}/t/${ws}`;

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

async function tokens(scope = "openid email profile") {
  const r = await signIn(h, ws, { ...SPA, ...ADA, scope });
  const res = await exchangeCode(h, ws, { code: r.callback.searchParams.get("code")!, redirect_uri: SPA.redirect_uri, verifier: r.verifier, client_id: SPA.client_id });
  return res.json();
}
const bearer = (path: string, token: string) => call(h, `/t/${ws}${path}`, { headers: { authorization: `Bearer ${token}` } });

describe("GET /oidc/session", () => {
  it("answers 200, no-store, with active, iss, client_id, sub and exp", async () => {
    const t = await tokens();
    const res = await bearer("/oidc/session", t.access_token);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await res.json();
    expect(body).toEqual({ active: true, iss: issuer, client_id: SPA.client_id, sub: decodeJwt(t.id_token).sub, exp: expect.any(Number) });
    expect(body.exp).toBe(Math.floor(h.clock.now().getTime() / 1000) + 300);
  });

  it("answers 401 once the access token expires (5 minutes)", async () => {
    const t = await tokens();
    h.clock.advance(299_000);
    expect((await bearer("/oidc/session", t.access_token)).status).toBe(200);
    h.clock.advance(2000);
    const res = await bearer("/oidc/session", t.access_token);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
  });

  it("answers 401 to a missing, malformed or unknown token", async () => {
    expect((await call(h, `/t/${ws}/oidc/session`)).status).toBe(401);
    expect((await call(h, `/t/${ws}/oidc/session`, { headers: { authorization: "Basic abc" } })).status).toBe(401);
    expect((await bearer("/oidc/session", "lka_unknown")).status).toBe(401);
  });

  it("answers 401 when the hosted session has ended (12 hours idle)", async () => {
    const t = await tokens();
    // The access token itself would still be valid for a moment; the session's end wins.
    h.clock.advance(12 * 3600_000 + 1);
    expect((await bearer("/oidc/session", t.access_token)).status).toBe(401);
  });

  it("answers 401 when the user is disabled", async () => {
    const t = await tokens();
    const doc = standardWorkspace(ws);
    doc.users[0] = { ...doc.users[0], status: "disabled" };
    await seed(h, doc);
    expect((await bearer("/oidc/session", t.access_token)).status).toBe(401);
    await seed(h, standardWorkspace(ws));
  });

  it("does not answer for another workspace's issuer", async () => {
    const t = await tokens();
    const other = uniqueWorkspaceId("sess-other");
    await seed(h, standardWorkspace(other));
    expect((await call(h, `/t/${other}/oidc/session`, { headers: { authorization: `Bearer ${t.access_token}` } })).status).toBe(401);
  });
});

describe("GET /oidc/userinfo", () => {
  it("returns sub and the scoped claims", async () => {
    const t = await tokens();
    const res = await bearer("/oidc/userinfo", t.access_token);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ sub: decodeJwt(t.id_token).sub, email: ADA.email, email_verified: true, name: ADA.name });
  });

  it("returns only sub for the openid scope", async () => {
    const t = await tokens("openid");
    expect(await (await bearer("/oidc/userinfo", t.access_token)).json()).toEqual({ sub: decodeJwt(t.id_token).sub });
  });

  it("refuses an expired token", async () => {
    const t = await tokens();
    h.clock.advance(301_000);
    expect((await bearer("/oidc/userinfo", t.access_token)).status).toBe(401);
  });
});

describe("refresh_token grant (rotation)", () => {
  it("rotates: the new refresh token works, the old one is reuse and revokes the family", async () => {
    const t = await tokens();
    const refresh = (rt: string) => call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: rt, client_id: SPA.client_id } });
    const first = await refresh(t.refresh_token);
    expect(first.status).toBe(200);
    const body = await first.json();
    expect(Object.keys(body).sort()).toEqual(["access_token", "expires_in", "refresh_token", "scope", "token_type"]);
    expect(body.refresh_token).not.toBe(t.refresh_token);
    expect((await bearer("/oidc/session", body.access_token)).status).toBe(200);
    const reuse = await refresh(t.refresh_token);
    expect((await reuse.json()).error).toBe("invalid_grant");
    expect((await bearer("/oidc/session", body.access_token)).status).toBe(401);
    expect((await refresh(body.refresh_token)).status).toBe(400);
  });
});
