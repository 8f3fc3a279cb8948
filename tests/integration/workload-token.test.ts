/**
 * Sealed workload (M2M) tokens end to end (lib/oauth/workload-token.ts): issued without a write,
 * judged by current authority at every check, revoked through the deny list, never valid in
 * another workspace.
 */
import { beforeAll, describe, expect, inject, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { accessTokens, apis, clientSecrets, revokedWorkloadTokens } from "../../db/schema";
import { sha256Hex } from "../../lib/crypto";
import { purgeRetained } from "../../lib/features/purge";
import { openWorkloadToken, WORKLOAD_TOKEN_PREFIX } from "../../lib/oauth/workload-token";
import { basic, call, createHarness, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { API, authzWorkspace, M2M, WEB } from "../helpers/fixtures";
import { auditRows } from "../helpers/lifecycle";

let h: Harness;
const ws = uniqueWorkspaceId("sealed");
const other = uniqueWorkspaceId("sealed-other");
const asM2M = { authorization: basic(M2M.client_id, M2M.secret) };

beforeAll(async () => {
  h = await createHarness();
  await seed(h, authzWorkspace(ws));
  await seed(h, authzWorkspace(other));
});

async function issue(workspace = ws): Promise<string> {
  const res = await call(h, `/t/${workspace}/oauth2/token`, { form: { grant_type: "client_credentials", resource: API, scope: "read:things" }, headers: asM2M });
  expect(res.status).toBe(200);
  return (await res.json()).access_token;
}
const introspect = async (token: string, workspace = ws) =>
  (await call(h, `/t/${workspace}/oauth2/introspect`, { form: { token }, headers: asM2M })).json();
const check = (token: string, workspace = ws) =>
  call(h, `/t/${workspace}/authorization/check`, {
    method: "POST",
    body: JSON.stringify({ resource: API, permission: "read:things", organization_id: null }),
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  });
const revoke = (token: string, headers: Record<string, string> = asM2M) => call(h, `/t/${ws}/oauth2/revoke`, { form: { token }, headers });

async function storedTokens(): Promise<number> {
  const [row] = await h.service.db.select({ n: sql<number>`count(*)::int` }).from(accessTokens).where(eq(accessTokens.workspaceId, ws));
  return row.n;
}

/** The token with one character of its body changed (still base64url). */
function altered(token: string): string {
  const i = WORKLOAD_TOKEN_PREFIX.length + 20;
  return token.slice(0, i) + (token[i] === "A" ? "B" : "A") + token.slice(i + 1);
}

describe("sealed workload tokens", () => {
  it("are issued without storing anything, and are active at introspection and the permission check", async () => {
    const before = await storedTokens();
    const token = await issue();
    expect(await storedTokens()).toBe(before);
    expect(await introspect(token)).toMatchObject({ active: true, client_id: M2M.client_id, sub: M2M.client_id, aud: API, scope: "read:things", principal_type: "workload" });
    const res = await check(token);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ allowed: true });
  });

  it("carry their expiry: active until 5 minutes, then inactive everywhere", async () => {
    const token = await issue();
    const { exp } = await introspect(token);
    expect(exp).toBe(Math.floor(h.clock.now().getTime() / 1000) + 300);
    h.clock.advance(299_000);
    expect((await introspect(token)).active).toBe(true);
    h.clock.advance(1_000);
    expect(await introspect(token)).toEqual({ active: false });
    expect((await check(token)).status).toBe(401);
  });

  it("are no token with a byte changed, or in another workspace whose client has the same id and secret", async () => {
    const token = await issue();
    const changed = altered(token);
    expect(changed).not.toBe(token);
    expect(await introspect(changed)).toEqual({ active: false });
    expect((await check(changed)).status).toBe(401);
    // Same client_id, same secret, same API audience in `other`: the token was sealed for `ws` only.
    expect(await introspect(token, other)).toEqual({ active: false });
    expect((await check(token, other)).status).toBe(401);
    const theirs = await issue(other);
    expect(await introspect(theirs, ws)).toEqual({ active: false });
    expect((await introspect(theirs, other)).active).toBe(true);
  });

  it("are refused by UserInfo and the session check", async () => {
    const token = await issue();
    expect((await call(h, `/t/${ws}/oidc/userinfo`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    expect((await call(h, `/t/${ws}/oidc/session`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
  });

  it("are revoked by their client alone, at once, with one audit event; the entry is purged after the token's expiry", async () => {
    const token = await issue();
    const sibling = await issue();
    // Another client's attempt: 200 and no effect.
    expect((await revoke(token, { authorization: basic(WEB.client_id, WEB.secret) })).status).toBe(200);
    expect((await introspect(token)).active).toBe(true);
    const before = (await auditRows(h, ws, "token.revoked")).length;
    expect((await revoke(token)).status).toBe(200);
    expect((await revoke(token)).status).toBe(200);
    expect(await introspect(token)).toEqual({ active: false });
    expect((await check(token)).status).toBe(401);
    // Only the submitted token.
    expect((await introspect(sibling)).active).toBe(true);
    const events = await auditRows(h, ws, "token.revoked");
    expect(events.length).toBe(before + 1);
    expect(events.at(-1)).toMatchObject({ clientId: M2M.client_id, subject: M2M.client_id, reason: "revocation_endpoint" });
    const entries = () => h.service.db.select().from(revokedWorkloadTokens).where(eq(revokedWorkloadTokens.workspaceId, ws));
    expect(await entries()).toHaveLength(1);
    // Kept until an hour past the token's expiry (as access tokens are), then purged.
    h.clock.advance(5 * 60_000 + 60 * 60_000 - 1_000);
    await purgeRetained(h.service, { workspaceId: ws, names: ["access_tokens", "revoked_workload_tokens"] });
    expect(await entries()).toHaveLength(1);
    h.clock.advance(2_000);
    await purgeRetained(h.service, { workspaceId: ws, names: ["access_tokens", "revoked_workload_tokens"] });
    expect(await entries()).toHaveLength(0);
  });

  it("end with their API, and with the credential that obtained them", async () => {
    const token = await issue();
    const theApi = and(eq(apis.workspaceId, ws), eq(apis.audience, API));
    await h.service.db.update(apis).set({ active: false }).where(theApi);
    try {
      expect(await introspect(token)).toEqual({ active: false });
    } finally {
      await h.service.db.update(apis).set({ active: true }).where(theApi);
    }
    expect((await introspect(token)).active).toBe(true);
    // The credential: revoked, and the token with it.
    const [secret] = await h.service.db.select().from(clientSecrets).where(and(eq(clientSecrets.workspaceId, ws), eq(clientSecrets.secretHash, sha256Hex(M2M.secret))));
    expect(openWorkloadToken(h.service.config.masterKey, ws, null, token, h.clock.now())?.credentialId).toBe(secret.id);
    await h.service.db.update(clientSecrets).set({ revokedAt: h.clock.now() }).where(eq(clientSecrets.id, secret.id));
    try {
      expect((await check(token)).status).toBe(401);
    } finally {
      await h.service.db.update(clientSecrets).set({ revokedAt: null }).where(eq(clientSecrets.id, secret.id));
    }
  });
});

describe.runIf(Boolean(inject("databaseUrl")))("revocation races (PostgreSQL)", () => {
  it("records one audit event when the same token is revoked by many requests at once", async () => {
    const token = await issue();
    const before = (await auditRows(h, ws, "token.revoked")).length;
    const answers = await Promise.all(Array.from({ length: 8 }, () => revoke(token)));
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect((await auditRows(h, ws, "token.revoked")).length).toBe(before + 1);
    const [row] = await h.service.db.select({ n: sql<number>`count(*)::int` }).from(revokedWorkloadTokens).where(and(eq(revokedWorkloadTokens.workspaceId, ws)));
    expect(row.n).toBeGreaterThanOrEqual(1);
    expect(await introspect(token)).toEqual({ active: false });
  });
});
