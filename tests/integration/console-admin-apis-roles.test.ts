/**
 * Console administration of APIs and roles: rename, deactivate and delete an API, rename and
 * delete a role. Each change is audited once; deletes are confirmed on the server by the typed
 * audience or role name, and their effect on tokens, grants and the permission check is real.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { accessTokens, apiGrants, apis, grants, refreshTokens, rolePermissions, roles, userRoles, users } from "../../db/schema";
import { ensureSystemWorkspace } from "../../lib/console/system";
import { sha256Hex } from "../../lib/crypto";
import { ADA, API, M2M, SPA, standardWorkspace } from "../helpers/fixtures";
import { basic, call, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { auditRows, humanTokens, insertWorkloadToken } from "../helpers/lifecycle";
import { adminAndViewer, createConsoleHarness, runRegistered } from "./console-helpers";

let h: Harness;
const ws = uniqueWorkspaceId("cadm-api");
let admin: string;
let viewer: string;

beforeAll(async () => {
  h = await createConsoleHarness();
  await seed(h, standardWorkspace(ws));
  await ensureSystemWorkspace(h.service);
  ({ admin, viewer } = await adminAndViewer(h, ws, "apis.test"));
});

const run = (token: string, name: Parameters<typeof runRegistered>[3], input: Record<string, unknown>) => runRegistered(h, token, ws, name, input);

async function apiRow(audience: string) {
  const [row] = await h.service.db.select().from(apis).where(and(eq(apis.workspaceId, ws), eq(apis.audience, audience)));
  return row ?? null;
}
async function roleRow(name: string) {
  const [row] = await h.service.db.select().from(roles).where(and(eq(roles.workspaceId, ws), eq(roles.name, name)));
  return row ?? null;
}

async function permission(token: string, perm = "read:things", resource = API): Promise<boolean | number> {
  const res = await call(h, `/t/${ws}/authorization/check`, {
    method: "POST",
    body: JSON.stringify({ resource, permission: perm, organization_id: null }),
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
  });
  return res.status === 200 ? ((await res.json()) as { allowed: boolean }).allowed : res.status;
}
const introspectAsM2M = async (token: string) =>
  (await call(h, `/t/${ws}/oauth2/introspect`, { form: { token }, headers: { authorization: basic(M2M.client_id, M2M.secret) } })).json();
const refresh = (refreshToken: string) => call(h, `/t/${ws}/oauth2/token`, { form: { grant_type: "refresh_token", refresh_token: refreshToken, client_id: SPA.client_id } });

describe("APIs", () => {
  it("renames an API, audited once; an unchanged save writes no event", async () => {
    const api = await apiRow(API);
    expect((await run(admin, "updateApi", { api_id: api.id, name: "Things", permissions: api.permissions.join(" ") })).ok).toBe(true);
    expect((await apiRow(API)).name).toBe("Things");
    expect((await run(admin, "updateApi", { api_id: api.id, name: "Things", permissions: api.permissions.join(" ") })).ok).toBe(true);
    expect(await auditRows(h, ws, "console.api.updated")).toHaveLength(1);
  });

  it("deactivating needs the typed audience; its tokens fail until it is active again", async () => {
    const api = await apiRow(API);
    const { token } = await insertWorkloadToken(h, ws, M2M.client_id, { audience: API });
    expect(await permission(token)).toBe(true);
    await expect(run(viewer, "setApiActive", { api_id: api.id, active: "false", confirm: API })).rejects.toMatchObject({ code: "forbidden" });
    const unconfirmed = await run(admin, "setApiActive", { api_id: api.id, active: "false" });
    expect(unconfirmed.ok).toBe(false);
    if (!unconfirmed.ok) expect(unconfirmed.fieldErrors.confirm).toMatch(/Type the audience/);
    expect((await apiRow(API)).active).toBe(true);

    expect((await run(admin, "setApiActive", { api_id: api.id, active: "false", confirm: API })).ok).toBe(true);
    expect((await apiRow(API)).active).toBe(false);
    expect(await introspectAsM2M(token)).toEqual({ active: false });
    expect(await permission(token)).toBe(401);
    // Activating again needs no confirmation, and the token (not deleted) passes again.
    expect((await run(admin, "setApiActive", { api_id: api.id, active: "true" })).ok).toBe(true);
    expect(await permission(token)).toBe(true);
    expect(await auditRows(h, ws, "console.api.status_changed")).toHaveLength(2);
  });

  it("deleting needs the typed audience and ends every token and grant for it (introspection inactive, refresh invalid_grant, check refused)", async () => {
    const api = await apiRow(API);
    const { token: workload } = await insertWorkloadToken(h, ws, M2M.client_id, { audience: API });
    const human = await humanTokens(h, ws, SPA, ADA, { scope: "openid read:things", resource: API });
    expect(await introspectAsM2M(workload)).toMatchObject({ active: true });
    expect(await permission(human.access_token)).toBe(true);

    for (const confirm of [undefined, "https://api.example.test/", "Things"]) {
      const out = await run(admin, "deleteApi", { api_id: api.id, ...(confirm === undefined ? {} : { confirm }) });
      expect(out.ok).toBe(false);
    }
    expect(await apiRow(API)).not.toBeNull();

    expect((await run(admin, "deleteApi", { api_id: api.id, confirm: API })).ok).toBe(true);
    const db = h.service.db;
    expect(await apiRow(API)).toBeNull();
    expect(await db.select().from(apiGrants).where(eq(apiGrants.apiId, api.id))).toHaveLength(0);
    expect(await db.select().from(rolePermissions).where(eq(rolePermissions.apiId, api.id))).toHaveLength(0);
    expect(await db.select().from(grants).where(eq(grants.apiId, api.id))).toHaveLength(0);
    expect(await db.select().from(accessTokens).where(eq(accessTokens.apiId, api.id))).toHaveLength(0);
    expect(await db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, sha256Hex(human.refresh_token)))).toHaveLength(0);

    expect(await introspectAsM2M(workload)).toEqual({ active: false });
    expect(await permission(workload)).toBe(401);
    expect(await permission(human.access_token)).toBe(401);
    const refused = await refresh(human.refresh_token);
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toBe("invalid_grant");

    const events = await auditRows(h, ws, "console.api.deleted");
    expect(events).toHaveLength(1);
    expect(events[0].subject).toBe(API);
    expect(events[0].data).toMatchObject({ grants_ended: 1, access_tokens_ended: 3 });
  });
});

describe("roles", () => {
  it("renames a role (name unique), audited once", async () => {
    const created = (await run(admin, "createRole", { name: "editor", description: "Edits" })) as { ok: true; result: { id: string } };
    const reader = await roleRow("reader");
    const clash = await run(admin, "updateRole", { role_id: created.result.id, name: "reader" });
    expect(clash.ok).toBe(false);
    if (!clash.ok) expect(clash.fieldErrors.name).toMatch(/already exists/);
    expect((await run(admin, "updateRole", { role_id: created.result.id, name: "author", description: "Writes" })).ok).toBe(true);
    expect(await roleRow("author")).toMatchObject({ id: created.result.id, description: "Writes" });
    expect(await roleRow("editor")).toBeNull();
    const events = await auditRows(h, ws, "console.role.updated");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ subject: "author", data: expect.objectContaining({ previous_name: "editor" }) });
    expect(reader).not.toBeNull();
  });

  it("deleting needs the typed name; the permission check denies its permissions at once", async () => {
    // A fresh API and role (the standard API was deleted above), held by Ada.
    const api = (await run(admin, "createApi", { audience: "https://docs.example.test", name: "Docs", permissions: "read:docs" })) as { ok: true; result: { id: string } };
    expect(api.ok).toBe(true);
    expect((await run(admin, "setClientApiGrant", { client_id: SPA.client_id, audience: "https://docs.example.test", granted: "on", permissions: "read:docs" })).ok).toBe(true);
    const role = (await run(admin, "createRole", { name: "docs-reader" })) as { ok: true; result: { id: string } };
    expect((await run(admin, "setRoleApiPermissions", { role: "docs-reader", audience: "https://docs.example.test", permissions: "read:docs" })).ok).toBe(true);
    const [ada] = await h.service.db.select().from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, ADA.email)));
    expect((await run(admin, "assignRole", { user_id: ada.id, role: "docs-reader" })).ok).toBe(true);
    const tokens = await humanTokens(h, ws, SPA, ADA, { scope: "openid read:docs", resource: "https://docs.example.test" });
    expect(tokens.scope).toBe("openid read:docs");
    expect(await permission(tokens.access_token, "read:docs", "https://docs.example.test")).toBe(true);

    await expect(run(viewer, "deleteRole", { role_id: role.result.id, confirm: "docs-reader" })).rejects.toMatchObject({ code: "forbidden" });
    const unconfirmed = await run(admin, "deleteRole", { role_id: role.result.id, confirm: "docs" });
    expect(unconfirmed.ok).toBe(false);
    if (!unconfirmed.ok) expect(unconfirmed.fieldErrors.confirm).toMatch(/Type the role's name/);
    expect(await roleRow("docs-reader")).not.toBeNull();

    expect((await run(admin, "deleteRole", { role_id: role.result.id, confirm: "docs-reader" })).ok).toBe(true);
    expect(await roleRow("docs-reader")).toBeNull();
    expect(await h.service.db.select().from(userRoles).where(eq(userRoles.roleId, role.result.id))).toHaveLength(0);
    expect(await permission(tokens.access_token, "read:docs", "https://docs.example.test")).toBe(false);
    const events = await auditRows(h, ws, "console.role.deleted");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ subject: "docs-reader", data: expect.objectContaining({ holders: 1 }) });
  });
});
