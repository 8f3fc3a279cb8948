import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { auditEvents, users } from "../../db/schema";
import {
  addOrganizationMember,
  assignUserRole,
  AuthzModelError,
  listApiGrants,
  listApis,
  listOrganizations,
  listRoles,
  listUserRoles,
  removeApiGrant,
  removeOrganizationMember,
  removeUserRole,
  setApiGrant,
  setApiPermissions,
  setRolePermissions,
} from "../../lib/authz/model";
import { exportWorkspace } from "../../lib/workspaces/file";
import { createHarness, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { ACME, ADA, API, authzWorkspace, BOB, GLOBEX, INACTIVE_API, M2M, OTHER_API, SPA, WEB, WIDE_API, WIDE_PERMISSIONS } from "../helpers/fixtures";

let h: Harness;
let ws: string;
let ada: string;
let bob: string;

beforeAll(async () => {
  h = await createHarness();
});

async function fresh(): Promise<void> {
  ws = uniqueWorkspaceId("model");
  await seed(h, authzWorkspace(ws));
  const rows = await h.service.db.select({ id: users.id, email: users.emailNormalized }).from(users).where(eq(users.workspaceId, ws));
  ada = rows.find((r) => r.email === ADA.email)!.id;
  bob = rows.find((r) => r.email === BOB.email)!.id;
}

const change = () => ({ workspaceId: ws, clock: h.clock, actor: "operator-1" });

async function expectModelError(promise: Promise<unknown>, code: string) {
  await expect(promise).rejects.toBeInstanceOf(AuthzModelError);
  await expect(promise).rejects.toMatchObject({ code });
}

describe("reads", () => {
  beforeAll(fresh);

  it("lists APIs with their permissions", async () => {
    const list = await listApis(h.service.db, ws);
    expect(list.map((a) => a.audience)).toEqual([API, INACTIVE_API, OTHER_API, WIDE_API].sort());
    expect(list.find((a) => a.audience === API)).toMatchObject({ name: "Things API", active: true, permissions: ["read:things", "write:things", "admin:things"] });
    expect(list.find((a) => a.audience === INACTIVE_API)?.active).toBe(false);
  });

  it("lists API grants, all or per client or per API", async () => {
    const all = await listApiGrants(h.service.db, ws);
    expect(all.map((g) => `${g.clientId} ${g.audience}`)).toEqual(
      [`${M2M.client_id} ${API}`, `${M2M.client_id} ${INACTIVE_API}`, `${M2M.client_id} ${WIDE_API}`, `${SPA.client_id} ${API}`, `${WEB.client_id} ${API}`],
    );
    const m2m = await listApiGrants(h.service.db, ws, { clientId: M2M.client_id });
    expect(m2m).toHaveLength(3);
    expect(m2m[0]).toEqual({ clientId: M2M.client_id, clientName: "Worker", clientType: "M2M", audience: API, apiName: "Things API", apiActive: true, permissions: ["read:things", "write:things"] });
    expect(m2m.find((g) => g.audience === WIDE_API)?.permissions).toEqual(WIDE_PERMISSIONS);
    expect((await listApiGrants(h.service.db, ws, { audience: API })).map((g) => g.clientId)).toEqual([M2M.client_id, SPA.client_id, WEB.client_id]);
  });

  it("lists roles with their permissions per API", async () => {
    const roles = await listRoles(h.service.db, ws);
    expect(roles.map((r) => r.name)).toEqual(["admin", "reader", "writer"]);
    expect(roles[0]).toMatchObject({ description: null, permissions: [{ audience: API, permissions: ["admin:things", "read:things"] }] });
  });

  it("lists a user's roles at workspace level and per organization", async () => {
    const roles = await listUserRoles(h.service.db, ws, ada);
    expect(roles.map((r) => [r.role, r.organization?.slug ?? null])).toEqual([
      ["reader", null],
      ["writer", null],
      ["admin", ACME],
    ]);
    expect(roles[2].organization).toMatchObject({ slug: ACME, name: "Acme", id: expect.any(String) });
    expect((await listUserRoles(h.service.db, ws, bob)).map((r) => [r.role, r.organization?.slug])).toEqual([["reader", GLOBEX]]);
  });

  it("lists organizations with their members", async () => {
    const orgs = await listOrganizations(h.service.db, ws);
    expect(orgs.map((o) => [o.slug, o.members.map((m) => m.email)])).toEqual([
      [ACME, [ADA.email]],
      [GLOBEX, [ADA.email, BOB.email]],
    ]);
    expect(orgs[0].members[0]).toEqual({ userId: ada, email: ADA.email, name: ADA.name });
  });

  it("never shows another workspace's entities", async () => {
    const other = uniqueWorkspaceId("model-empty");
    await seed(h, { id: other, name: "Empty" });
    expect(await listApis(h.service.db, other)).toEqual([]);
    expect(await listApiGrants(h.service.db, other)).toEqual([]);
    expect(await listRoles(h.service.db, other)).toEqual([]);
    expect(await listOrganizations(h.service.db, other)).toEqual([]);
    expect(await listUserRoles(h.service.db, other, ada)).toEqual([]);
  });
});

describe("changes", () => {
  beforeAll(fresh);

  it("assigns and removes workspace roles, idempotently, with audit events", async () => {
    expect(await assignUserRole(h.service.db, { ...change(), userId: bob, role: "writer", organization: null })).toBe(true);
    expect(await assignUserRole(h.service.db, { ...change(), userId: bob, role: "writer", organization: null })).toBe(false);
    expect((await listUserRoles(h.service.db, ws, bob)).map((r) => r.role)).toEqual(["writer", "reader"]);
    expect(await removeUserRole(h.service.db, { ...change(), userId: bob, role: "writer", organization: null })).toBe(true);
    expect(await removeUserRole(h.service.db, { ...change(), userId: bob, role: "writer", organization: null })).toBe(false);
    const events = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.actor, "operator-1")));
    expect(events.map((e) => e.type).sort()).toEqual(["authz.user_role.assigned", "authz.user_role.removed"]);
  });

  it("assigns organization roles to members only, and keeps levels apart", async () => {
    await expectModelError(assignUserRole(h.service.db, { ...change(), userId: bob, role: "admin", organization: ACME }), "invalid_argument");
    expect(await assignUserRole(h.service.db, { ...change(), userId: bob, role: "admin", organization: GLOBEX })).toBe(true);
    // Removing at workspace level does not touch the organization role.
    expect(await removeUserRole(h.service.db, { ...change(), userId: bob, role: "admin", organization: null })).toBe(false);
    expect((await listUserRoles(h.service.db, ws, bob)).map((r) => `${r.role}@${r.organization?.slug}`)).toEqual(["admin@globex", "reader@globex"]);
    expect(await removeUserRole(h.service.db, { ...change(), userId: bob, role: "admin", organization: GLOBEX })).toBe(true);
  });

  it("refuses unknown users, roles and organizations", async () => {
    await expectModelError(assignUserRole(h.service.db, { ...change(), userId: "nobody", role: "reader", organization: null }), "not_found");
    await expectModelError(assignUserRole(h.service.db, { ...change(), userId: bob, role: "nope", organization: null }), "not_found");
    await expectModelError(assignUserRole(h.service.db, { ...change(), userId: bob, role: "reader", organization: "nope" }), "not_found");
    // A user of another workspace is unknown here.
    const other = uniqueWorkspaceId("model-other");
    await seed(h, authzWorkspace(other));
    await expectModelError(assignUserRole(h.service.db, { workspaceId: other, clock: h.clock, userId: bob, role: "reader", organization: null }), "not_found");
  });

  it("sets, replaces and removes API grants with permissions the API defines", async () => {
    await setApiGrant(h.service.db, { ...change(), clientId: M2M.client_id, audience: OTHER_API, permissions: ["read:other"] });
    expect((await listApiGrants(h.service.db, ws, { clientId: M2M.client_id, audience: OTHER_API }))[0].permissions).toEqual(["read:other"]);
    await setApiGrant(h.service.db, { ...change(), clientId: M2M.client_id, audience: OTHER_API, permissions: [] });
    expect((await listApiGrants(h.service.db, ws, { clientId: M2M.client_id, audience: OTHER_API }))[0].permissions).toEqual([]);
    expect(await removeApiGrant(h.service.db, { ...change(), clientId: M2M.client_id, audience: OTHER_API })).toBe(true);
    expect(await removeApiGrant(h.service.db, { ...change(), clientId: M2M.client_id, audience: OTHER_API })).toBe(false);
    expect(await listApiGrants(h.service.db, ws, { clientId: M2M.client_id, audience: OTHER_API })).toEqual([]);
    for (const permissions of [["read:things"], ["read:other", "read:other"], ["openid"]]) {
      await expectModelError(setApiGrant(h.service.db, { ...change(), clientId: M2M.client_id, audience: OTHER_API, permissions }), "invalid_argument");
    }
    await expectModelError(setApiGrant(h.service.db, { ...change(), clientId: "nobody", audience: OTHER_API, permissions: [] }), "not_found");
    await expectModelError(setApiGrant(h.service.db, { ...change(), clientId: M2M.client_id, audience: "https://none.example.test", permissions: [] }), "not_found");
  });

  it("sets a role's permissions per API; an empty list drops the API from the role", async () => {
    await setRolePermissions(h.service.db, { ...change(), role: "reader", audience: OTHER_API, permissions: ["read:other"] });
    const reader = () => listRoles(h.service.db, ws).then((roles) => roles.find((r) => r.name === "reader")!);
    expect((await reader()).permissions).toEqual([
      { audience: API, permissions: ["read:things"] },
      { audience: OTHER_API, permissions: ["read:other"] },
    ]);
    await setRolePermissions(h.service.db, { ...change(), role: "reader", audience: OTHER_API, permissions: [] });
    expect((await reader()).permissions).toEqual([{ audience: API, permissions: ["read:things"] }]);
    await expectModelError(setRolePermissions(h.service.db, { ...change(), role: "reader", audience: API, permissions: ["read:other"] }), "invalid_argument");
  });

  it("drops a permission removed from an API from its grants and roles too", async () => {
    await setApiPermissions(h.service.db, { ...change(), audience: API, permissions: ["write:things", "admin:things"] });
    expect((await listApis(h.service.db, ws)).find((a) => a.audience === API)?.permissions).toEqual(["write:things", "admin:things"]);
    expect((await listApiGrants(h.service.db, ws, { clientId: M2M.client_id, audience: API }))[0].permissions).toEqual(["write:things"]);
    const roles = await listRoles(h.service.db, ws);
    expect(roles.find((r) => r.name === "reader")?.permissions).toEqual([{ audience: API, permissions: [] }]);
    expect(roles.find((r) => r.name === "admin")?.permissions).toEqual([{ audience: API, permissions: ["admin:things"] }]);
    for (const permissions of [["openid"], ["a b"], ["x", "x"], [""]]) {
      await expectModelError(setApiPermissions(h.service.db, { ...change(), audience: API, permissions }), "invalid_argument");
    }
    await setApiPermissions(h.service.db, { ...change(), audience: API, permissions: ["read:things", "write:things", "admin:things"] });
  });

  it("adds and removes organization members; removal takes the organization's roles with it", async () => {
    expect(await addOrganizationMember(h.service.db, { ...change(), organization: ACME, userId: bob })).toBe(true);
    expect(await addOrganizationMember(h.service.db, { ...change(), organization: ACME, userId: bob })).toBe(false);
    await assignUserRole(h.service.db, { ...change(), userId: bob, role: "admin", organization: ACME });
    expect(await removeOrganizationMember(h.service.db, { ...change(), organization: ACME, userId: bob })).toBe(true);
    expect((await listUserRoles(h.service.db, ws, bob)).map((r) => `${r.role}@${r.organization?.slug}`)).toEqual(["reader@globex"]);
    expect((await listOrganizations(h.service.db, ws)).find((o) => o.slug === ACME)?.members.map((m) => m.email)).toEqual([ADA.email]);
    expect(await removeOrganizationMember(h.service.db, { ...change(), organization: ACME, userId: bob })).toBe(false);
  });

  it("round-trips through the workspace file", async () => {
    await assignUserRole(h.service.db, { ...change(), userId: bob, role: "writer", organization: null });
    await setApiGrant(h.service.db, { ...change(), clientId: WEB.client_id, audience: OTHER_API, permissions: ["read:other"] });
    const doc = (await exportWorkspace(h.service.db, ws))!;
    expect(doc.users.find((u) => u.email === BOB.email)?.roles).toEqual(["writer", { role: "reader", organization: GLOBEX }]);
    expect(doc.api_grants).toContainEqual({ client_id: WEB.client_id, audience: OTHER_API, permissions: ["read:other"] });
    // Importing the export changes nothing.
    const again = uniqueWorkspaceId("model-copy");
    await seed(h, { ...doc, id: again });
    const copy = (await exportWorkspace(h.service.db, again))!;
    expect({ ...copy, id: ws }).toEqual(doc);
  });
});
