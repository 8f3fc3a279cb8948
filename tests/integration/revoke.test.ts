import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { decodeJwt } from "jose";
import { accessTokens, clientSecrets, grants } from "../../db/schema";
import { openDatabase, type DatabaseHandle } from "../../db/client";
import { sha256Hex } from "../../lib/crypto";
import { createService } from "../../lib/service";
import { basic, call, createHarness, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ADA, BOB, M2M, MINIMAL, SPA, WEB, standardWorkspace } from "../helpers/fixtures";
import { auditRows, humanTokens, insertWorkloadToken } from "../helpers/lifecycle";

let h: Harness;
const ws = uniqueWorkspaceId("revoke");

beforeAll(async () => {
  h = await createHarness();
  await seed(h, standardWorkspace(ws));
});

const spaTokens = (scope?: string) => humanTokens(h, ws, SPA, ADA, { scope });
const webTokens = () => humanTokens(h, ws, WEB, ADA);
const revoke = (form: Record<string, string> | string, headers: Record<string, string> = {}) => call(h, `/t/${ws}/oauth2/revoke`, { form, headers });
const revokeAsSpa = (token: string, extra: Record<string, string> = {}) => revoke({ token, client_id: SPA.client_id, ...extra });
const revokeAsWeb = (token: string, extra: Record<string, string> = {}) => revoke({ token, ...extra }, { authorization: basic(WEB.client_id, WEB.secret) });
const sessionCheck = (at: string) => call(h, `/t/${ws}/oidc/session`, { headers: { authorization: `Bearer ${at}` } });
const refresh = (rt: string, client: { client_id: string; secret?: string } = SPA) =>
  call(h, `/t/${ws}/oauth2/token`, {
    form: { grant_type: "refresh_token", refresh_token: rt, ...(client.secret ? {} : { client_id: client.client_id }) },
    headers: client.secret ? { authorization: basic(client.client_id, client.secret) } : {},
  });
const introspectAsM2M = (token: string) => call(h, `/t/${ws}/oauth2/introspect`, { form: { token }, headers: { authorization: basic(M2M.client_id, M2M.secret) } });

async function grantOf(accessToken: string) {
  const [row] = await h.service.db
    .select({ grant: grants })
    .from(accessTokens)
    .innerJoin(grants, eq(grants.id, accessTokens.grantId))
    .where(eq(accessTokens.tokenHash, sha256Hex(accessToken)));
  return row.grant;
}

async function expectEmpty200(res: Response) {
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBeNull();
  expect(res.headers.get("cache-control")).toBe("no-store");
  expect(await res.text()).toBe("");
}

describe("POST /oauth2/revoke: human tokens end the whole grant", () => {
  it("revoking the access token (public client, body client_id) ends the refresh family", async () => {
    const t = await spaTokens();
    expect((await sessionCheck(t.access_token)).status).toBe(200);
    await expectEmpty200(await revokeAsSpa(t.access_token));
    expect((await sessionCheck(t.access_token)).status).toBe(401);
    const r = await refresh(t.refresh_token);
    expect(r.status).toBe(400);
    expect((await r.json()).error).toBe("invalid_grant");
    const grant = await grantOf(t.access_token);
    expect(grant.revokedAt).not.toBeNull();
    expect(grant.revokeReason).toBe("revocation_endpoint");
  });

  it("revoking the refresh token ends every access token issued from the family", async () => {
    const t = await spaTokens();
    const rotated = await (await refresh(t.refresh_token)).json();
    expect((await sessionCheck(t.access_token)).status).toBe(200);
    expect((await sessionCheck(rotated.access_token)).status).toBe(200);
    await expectEmpty200(await revokeAsSpa(rotated.refresh_token));
    expect((await sessionCheck(t.access_token)).status).toBe(401);
    expect((await sessionCheck(rotated.access_token)).status).toBe(401);
    expect((await refresh(rotated.refresh_token)).status).toBe(400);
    // Each access token row is marked as well, not only the family.
    const grant = await grantOf(t.access_token);
    const rows = await h.service.db.select({ revokedAt: accessTokens.revokedAt }).from(accessTokens).where(eq(accessTokens.grantId, grant.id));
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.revokedAt).not.toBeNull();
  });

  it("finds the token whatever the hint says (the hint only orders the search)", async () => {
    const a = await spaTokens();
    await expectEmpty200(await revokeAsSpa(a.access_token, { token_type_hint: "refresh_token" }));
    expect((await sessionCheck(a.access_token)).status).toBe(401);
    const b = await spaTokens();
    await expectEmpty200(await revokeAsSpa(b.refresh_token, { token_type_hint: "access_token" }));
    expect((await sessionCheck(b.access_token)).status).toBe(401);
    const c = await spaTokens();
    await expectEmpty200(await revokeAsSpa(c.refresh_token, { token_type_hint: "refresh_token" }));
    expect((await refresh(c.refresh_token)).status).toBe(400);
  });

  it("a superseded refresh token of the client still ends its family", async () => {
    const t = await spaTokens();
    const rotated = await (await refresh(t.refresh_token)).json();
    await expectEmpty200(await revokeAsSpa(t.refresh_token));
    expect((await sessionCheck(rotated.access_token)).status).toBe(401);
    expect((await refresh(rotated.refresh_token)).status).toBe(400);
  });

  it("a confidential client revokes with HTTP Basic (and a matching body client_id is allowed)", async () => {
    const t = await webTokens();
    await expectEmpty200(await revokeAsWeb(t.refresh_token, { client_id: WEB.client_id }));
    expect((await sessionCheck(t.access_token)).status).toBe(401);
    expect((await refresh(t.refresh_token, WEB)).status).toBe(400);
  });

  it("leaves the user's other grants alone", async () => {
    const one = await spaTokens();
    const two = await humanTokens(h, ws, SPA, ADA, { jar: one.jar });
    await expectEmpty200(await revokeAsSpa(one.access_token));
    expect((await sessionCheck(one.access_token)).status).toBe(401);
    expect((await sessionCheck(two.access_token)).status).toBe(200);
    expect((await refresh(two.refresh_token)).status).toBe(200);
  });

  it("records one grant.revoked audit event with workspace, client, subject, reason and time", async () => {
    const t = await humanTokens(h, ws, SPA, BOB);
    const sub = decodeJwt(t.id_token).sub;
    const before = (await auditRows(h, ws, "grant.revoked")).length;
    await expectEmpty200(await revokeAsSpa(t.refresh_token));
    await expectEmpty200(await revokeAsSpa(t.access_token)); // already revoked: no second event
    const rows = (await auditRows(h, ws, "grant.revoked")).filter((r) => r.subject === sub);
    expect(rows).toHaveLength(1);
    expect((await auditRows(h, ws, "grant.revoked")).length).toBe(before + 1);
    const [event] = rows;
    expect(event).toMatchObject({ workspaceId: ws, clientId: SPA.client_id, subject: sub, reason: "revocation_endpoint", flagged: null });
    expect(event.createdAt.getTime()).toBe(h.clock.now().getTime());
    expect(event.data).toMatchObject({ grant_id: (await grantOf(t.access_token)).id, token_type: "refresh_token" });
  });
});

describe("POST /oauth2/revoke: tokens without effect", () => {
  it("answers 200 to an unknown token", async () => {
    await expectEmpty200(await revokeAsSpa("lka_unknown-token"));
    await expectEmpty200(await revokeAsSpa("lkr_unknown-token"));
    await expectEmpty200(await revokeAsSpa("anything at all"));
  });

  it("answers 200 to another client's token and leaves it active", async () => {
    const t = await spaTokens();
    const before = (await auditRows(h, ws, "grant.revoked")).length;
    await expectEmpty200(await revokeAsWeb(t.access_token));
    await expectEmpty200(await revokeAsWeb(t.refresh_token));
    await expectEmpty200(await revoke({ token: t.access_token, client_id: MINIMAL.client_id }));
    await expectEmpty200(await revoke({ token: t.refresh_token, client_id: MINIMAL.client_id }));
    await expectEmpty200(await revoke({ token: t.access_token }, { authorization: basic(M2M.client_id, M2M.secret) }));
    expect((await sessionCheck(t.access_token)).status).toBe(200);
    expect((await grantOf(t.access_token)).revokedAt).toBeNull();
    expect((await refresh(t.refresh_token)).status).toBe(200);
    expect((await auditRows(h, ws, "grant.revoked")).length).toBe(before);
  });

  it("answers 200 to a token of the same client id in another workspace, which stays active", async () => {
    const other = uniqueWorkspaceId("revoke-other");
    await seed(h, standardWorkspace(other));
    const t = await humanTokens(h, other, SPA, ADA);
    await expectEmpty200(await revokeAsSpa(t.access_token));
    expect((await call(h, `/t/${other}/oidc/session`, { headers: { authorization: `Bearer ${t.access_token}` } })).status).toBe(200);
  });

  it("answers 200 to an expired token of the client", async () => {
    const t = await spaTokens();
    h.clock.advance(301_000);
    await expectEmpty200(await revokeAsSpa(t.access_token));
  });
});

describe("POST /oauth2/revoke: M2M tokens end only themselves", () => {
  it("revokes the submitted workload token and no other", async () => {
    const one = await insertWorkloadToken(h, ws, M2M.client_id);
    const two = await insertWorkloadToken(h, ws, M2M.client_id);
    expect((await (await introspectAsM2M(one.token)).json()).active).toBe(true);
    await expectEmpty200(await revoke({ token: one.token }, { authorization: basic(M2M.client_id, M2M.secret) }));
    expect(await (await introspectAsM2M(one.token)).json()).toEqual({ active: false });
    expect((await (await introspectAsM2M(two.token)).json()).active).toBe(true);
    const [row] = await h.service.db.select({ revokedAt: accessTokens.revokedAt }).from(accessTokens).where(eq(accessTokens.tokenHash, sha256Hex(one.token)));
    expect(row.revokedAt).not.toBeNull();
    // The credential that obtained it stays active.
    const [credential] = await h.service.db.select({ revokedAt: clientSecrets.revokedAt }).from(clientSecrets).where(eq(clientSecrets.id, one.credentialId));
    expect(credential.revokedAt).toBeNull();
  });

  it("records a token.revoked audit event, once", async () => {
    const { token } = await insertWorkloadToken(h, ws, M2M.client_id);
    const before = (await auditRows(h, ws, "token.revoked")).length;
    await expectEmpty200(await revoke({ token, client_id: M2M.client_id }, { authorization: basic(M2M.client_id, M2M.secret) }));
    await expectEmpty200(await revoke({ token }, { authorization: basic(M2M.client_id, M2M.secret) }));
    const rows = await auditRows(h, ws, "token.revoked");
    expect(rows.length).toBe(before + 1);
    expect(rows.at(-1)).toMatchObject({ workspaceId: ws, clientId: M2M.client_id, subject: M2M.client_id, reason: "revocation_endpoint" });
  });

  it("ignores another client's attempt to revoke a workload token", async () => {
    const { token } = await insertWorkloadToken(h, ws, M2M.client_id);
    await expectEmpty200(await revokeAsWeb(token));
    await expectEmpty200(await revoke({ token, client_id: SPA.client_id }));
    expect((await (await introspectAsM2M(token)).json()).active).toBe(true);
  });
});

describe("POST /oauth2/revoke: client authentication and the request", () => {
  it("refuses a body client_secret with 400 invalid_request and revokes nothing", async () => {
    const t = await webTokens();
    const res = await revoke({ token: t.access_token, client_id: WEB.client_id, client_secret: WEB.secret });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe("invalid_request");
    expect((await sessionCheck(t.access_token)).status).toBe(200);
  });

  it("refuses a confidential client without Basic, a wrong secret, and a public client with Basic (401 invalid_client)", async () => {
    const t = await webTokens();
    const noBasic = await revoke({ token: t.access_token, client_id: WEB.client_id });
    expect(noBasic.status).toBe(401);
    expect((await noBasic.json()).error).toBe("invalid_client");
    const wrong = await revoke({ token: t.access_token }, { authorization: basic(WEB.client_id, "not-the-secret") });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toMatch(/^Basic/);
    const publicBasic = await revoke({ token: t.access_token }, { authorization: basic(SPA.client_id, "x") });
    expect(publicBasic.status).toBe(401);
    expect((await sessionCheck(t.access_token)).status).toBe(200);
  });

  it("refuses a request without any client authentication and an unknown client (401)", async () => {
    const t = await spaTokens();
    expect((await revoke({ token: t.access_token })).status).toBe(401);
    expect((await revoke({ token: t.access_token, client_id: "nobody" })).status).toBe(401);
    expect((await sessionCheck(t.access_token)).status).toBe(200);
  });

  it("refuses a body client_id that differs from the Basic client", async () => {
    const t = await webTokens();
    const res = await revoke({ token: t.access_token, client_id: SPA.client_id }, { authorization: basic(WEB.client_id, WEB.secret) });
    expect(res.status).toBe(400);
    expect((await sessionCheck(t.access_token)).status).toBe(200);
  });

  it("refuses confidential authentication from a browser origin (403)", async () => {
    const t2 = await webTokens();
    const fromBrowser = await revoke({ token: t2.access_token }, { authorization: basic(WEB.client_id, WEB.secret), origin: "https://web.example.test" });
    expect(fromBrowser.status).toBe(403);
    expect((await sessionCheck(t2.access_token)).status).toBe(200);
  });

  it("requires token; refuses a hint outside access_token/refresh_token, duplicates and unknown parameters (400)", async () => {
    const t = await spaTokens();
    const forms: (Record<string, string> | string)[] = [
      { client_id: SPA.client_id },
      { token: "", client_id: SPA.client_id },
      { token: t.access_token, client_id: SPA.client_id, token_type_hint: "id_token" },
      { token: t.access_token, client_id: SPA.client_id, foo: "bar" },
      `token=${t.access_token}&token=${t.access_token}&client_id=${SPA.client_id}`,
    ];
    for (const form of forms) {
      const res = await revoke(form);
      expect(res.status, JSON.stringify(form)).toBe(400);
      expect((await res.json()).error).toBe("invalid_request");
    }
    expect((await sessionCheck(t.access_token)).status).toBe(200);
  });

  it("requires a form body (415) of at most 8 KiB (413); only POST (405)", async () => {
    const t = await spaTokens();
    const json = await call(h, `/t/${ws}/oauth2/revoke`, { method: "POST", body: JSON.stringify({ token: t.access_token, client_id: SPA.client_id }), headers: { "content-type": "application/json" } });
    expect(json.status).toBe(415);
    const big = await revoke({ token: t.access_token, client_id: SPA.client_id, token_type_hint: "x".repeat(9000) });
    expect(big.status).toBe(413);
    const get = await call(h, `/t/${ws}/oauth2/revoke?token=${t.access_token}&client_id=${SPA.client_id}`);
    expect(get.status).toBe(405);
    expect((await sessionCheck(t.access_token)).status).toBe(200);
  });

  it("is not reachable through another workspace's issuer", async () => {
    const t = await spaTokens();
    const res = await call(h, `/t/no-such-workspace/oauth2/revoke`, { form: { token: t.access_token, client_id: SPA.client_id } });
    expect(res.status).toBe(404);
    expect((await sessionCheck(t.access_token)).status).toBe(200);
  });
});

describe("POST /oauth2/revoke: an unreachable database", () => {
  let down: DatabaseHandle;
  beforeAll(async () => {
    // Nothing listens on port 9: every query fails to connect.
    down = await openDatabase({ databaseUrl: "postgres://postgres@127.0.0.1:9/latchkey" });
  });
  afterAll(async () => down.close());

  it("answers 503 with Retry-After, never a 200 that would claim the revocation happened", async () => {
    const t = await spaTokens();
    const broken = { ...h, service: createService(down.db, h.service.config, h.clock) };
    const res = await call(broken, `/t/${ws}/oauth2/revoke`, { form: { token: t.refresh_token, client_id: SPA.client_id } });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBeTruthy();
    expect((await res.json()).error).toBe("temporarily_unavailable");
    // Nothing changed on the real database either.
    expect((await sessionCheck(t.access_token)).status).toBe(200);
  });
});
