/**
 * SCIM `/Groups` (lib/organizations/scim/groups.ts): groups and their members as Entra and Okta
 * manage them, the organization's mapping from groups to roles following every change, the
 * directory's tokens (rotation overlap, revocation, last use) and its request log.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { roles, scimDirectories, scimRequests, scimTokens } from "../../../db/schema";
import { issueToken, revokeToken, listTokens } from "../../../lib/organizations/scim/directory";
import { KEPT_REQUESTS, recentRequests, TRIM_EVERY } from "../../../lib/organizations/scim/request-log";
import { ACME, GLOBEX } from "../../helpers/fixtures";
import { createHarness, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { auditRows } from "../../helpers/lifecycle";
import { accountOf, directoryWithToken, json, oktaUser, organizationRoleIds, scimClient, seedScimWorkspace, type ScimClient } from "./helpers";

let h: Harness;
const ws = uniqueWorkspaceId("scimg");
let ids: Awaited<ReturnType<typeof seedScimWorkspace>>;
let globex: ScimClient;
let directoryId: string;
let writer: string;
let admin: string;
const PATCH_SCHEMA = ["urn:ietf:params:scim:api:messages:2.0:PatchOp"];
const GROUP_SCHEMA = ["urn:ietf:params:scim:schemas:core:2.0:Group"];

beforeAll(async () => {
  h = await createHarness();
  ids = await seedScimWorkspace(h, ws);
  const byName = new Map((await h.service.db.select().from(roles).where(eq(roles.workspaceId, ws))).map((r) => [r.name, r.id]));
  writer = byName.get("writer")!;
  admin = byName.get("admin")!;
  const made = await directoryWithToken(h, ws, ids.globex, { groupRoles: [{ group: "Engineering", roleIds: [writer] }, { group: "Admins", roleIds: [admin, writer] }] });
  directoryId = made.directory.id;
  globex = scimClient(h, ws, GLOBEX, made.token);
});

async function user(name: string) {
  const res = await globex("POST", "/Users", oktaUser(`${name}@globex.test`, `${name}-ext`));
  expect(res.status).toBe(201);
  const body = await json(res);
  return { id: body.id as string, userId: (await accountOf(h, ws, body.id))!.user.id };
}

const rolesOf = (userId: string) => organizationRoleIds(h, ws, ids.globex, userId);

describe("groups and roles", () => {
  it("a group created with members gives them the mapped roles in the organization", async () => {
    const ann = await user("ann");
    const res = await globex("POST", "/Groups", { schemas: GROUP_SCHEMA, displayName: "Engineering", members: [{ value: ann.id }] });
    expect(res.status).toBe(201);
    const group = await json(res);
    expect(group.members).toEqual([{ value: ann.id, display: "Test User", $ref: `https://auth.example.test/t/${ws}/scim/v2/o/globex/Users/${ann.id}` }]);
    expect(await rolesOf(ann.userId)).toEqual([writer]);
  });

  it("Entra's member add and remove (capitalised op, a members value list) and Okta's (a filtered path) change the roles at once", async () => {
    const [ben, cat] = [await user("ben"), await user("cat")];
    const group = await json(await globex("POST", "/Groups", { schemas: GROUP_SCHEMA, displayName: "Admins" }));
    const add = await globex("PATCH", `/Groups/${group.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "Add", path: "members", value: [{ value: ben.id }, { value: cat.id }] }] });
    expect(add.status).toBe(204);
    expect(await rolesOf(ben.userId)).toEqual([admin, writer].sort());
    const entraRemove = await globex("PATCH", `/Groups/${group.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "Remove", path: "members", value: [{ value: ben.id }] }] });
    expect(entraRemove.status).toBe(204);
    expect(await rolesOf(ben.userId)).toEqual([]);
    await globex("PATCH", `/Groups/${group.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "remove", path: `members[value eq "${cat.id}"]` }] });
    expect(await rolesOf(cat.userId)).toEqual([]);
    const read = await json(await globex("GET", `/Groups/${group.id}`));
    expect(read.members).toEqual([]);
    // Created, then three changes.
    expect(read.meta.version).toBe('W/"4"');
  });

  it("a role given by two groups stays while one of them still gives it; roles the mapping does not name are left alone", async () => {
    const dee = await user("dee");
    const eng = await json(await globex("POST", "/Groups", { schemas: GROUP_SCHEMA, displayName: "Eng Two" }));
    const admins = (await json(await globex("GET", `/Groups?filter=${encodeURIComponent('displayName eq "admins"')}`))).Resources[0];
    await h.service.db.update(scimDirectories).set({ groupRoles: [{ group: "Eng Two", roleIds: [writer] }, { group: "Admins", roleIds: [admin, writer] }] }).where(eq(scimDirectories.id, directoryId));
    await globex("PATCH", `/Groups/${eng.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "add", value: { members: [{ value: dee.id }] } }] });
    await globex("PATCH", `/Groups/${admins.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "add", path: "members", value: [{ value: dee.id }] }] });
    expect(await rolesOf(dee.userId)).toEqual([admin, writer].sort());
    await globex("PATCH", `/Groups/${admins.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "remove", path: `members[value eq "${dee.id}"]` }] });
    expect(await rolesOf(dee.userId)).toEqual([writer]);
    await h.service.db.update(scimDirectories).set({ groupRoles: [{ group: "Engineering", roleIds: [writer] }, { group: "Admins", roleIds: [admin, writer] }] }).where(eq(scimDirectories.id, directoryId));
  });

  it("renaming a group moves its members between mappings; deleting it takes its roles away", async () => {
    const eve = await user("eve");
    const group = await json(await globex("POST", "/Groups", { schemas: GROUP_SCHEMA, displayName: "Interns", members: [{ value: eve.id }] }));
    expect(await rolesOf(eve.userId)).toEqual([]);
    // Okta renames with a path-less replace that echoes the id.
    await globex("PATCH", `/Groups/${group.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "replace", value: { id: group.id, displayName: "Admins 2" } }] });
    expect(await rolesOf(eve.userId)).toEqual([]);
    const renamed = await globex("PUT", `/Groups/${group.id}`, { schemas: GROUP_SCHEMA, displayName: "admins", members: [{ value: eve.id }] });
    expect(renamed.status).toBe(409);
    await h.service.db.update(scimDirectories).set({ groupRoles: [{ group: "Engineering", roleIds: [writer] }, { group: "Admins", roleIds: [admin, writer] }, { group: "Admins 2", roleIds: [admin] }] }).where(eq(scimDirectories.id, directoryId));
    await globex("PATCH", `/Groups/${group.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "replace", path: "displayName", value: "Interns" }] });
    await globex("PATCH", `/Groups/${group.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "replace", path: "displayName", value: "Admins 2" }] });
    expect(await rolesOf(eve.userId)).toEqual([admin]);
    expect((await globex("DELETE", `/Groups/${group.id}`)).status).toBe(204);
    expect(await rolesOf(eve.userId)).toEqual([]);
    expect((await globex("GET", `/Groups/${group.id}`)).status).toBe(404);
    expect((await auditRows(h, ws, "scim.group.changed")).some((e) => e.subject === "Admins 2" && (e.data as { change: string }).change === "deleted")).toBe(true);
  });

  it("a deactivated member loses the group's roles and gets them back when active again", async () => {
    const fox = await user("fox");
    await globex("POST", "/Groups", { schemas: GROUP_SCHEMA, displayName: "Engineering 3", members: [{ value: fox.id }] });
    const eng = (await json(await globex("GET", `/Groups?filter=${encodeURIComponent('displayName eq "Engineering"')}`))).Resources[0];
    await globex("PATCH", `/Groups/${eng.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "add", path: "members", value: [{ value: fox.id }] }] });
    expect(await rolesOf(fox.userId)).toEqual([writer]);
    await globex("PATCH", `/Users/${fox.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "replace", path: "active", value: false }] });
    expect(await rolesOf(fox.userId)).toEqual([]);
    await globex("PATCH", `/Users/${fox.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "replace", path: "active", value: true }] });
    expect(await rolesOf(fox.userId)).toEqual([writer]);
  });

  it("PUT replaces members; unknown members and a missing displayName are refused (400)", async () => {
    const [gil, hal] = [await user("gil"), await user("hal")];
    const group = await json(await globex("POST", "/Groups", { schemas: GROUP_SCHEMA, displayName: "Engineering 4", members: [{ value: gil.id }] }));
    const put = await globex("PUT", `/Groups/${group.id}`, { schemas: GROUP_SCHEMA, displayName: "Engineering 4", externalId: "eng4", members: [{ value: hal.id }] });
    expect(put.status).toBe(200);
    expect((await json(put)).members.map((m: { value: string }) => m.value)).toEqual([hal.id]);
    expect((await globex("PATCH", `/Groups/${group.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "add", path: "members", value: [{ value: "nobody" }] }] })).status).toBe(400);
    expect((await globex("POST", "/Groups", { schemas: GROUP_SCHEMA, members: [] })).status).toBe(400);
    expect((await globex("POST", "/Groups", { schemas: GROUP_SCHEMA, displayName: "Engineering 4" })).status).toBe(409);
  });

  it("lists groups with a filter and without members when asked (Entra's excludedAttributes=members)", async () => {
    const list = await json(await globex("GET", `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName sw "engineering"')}`));
    expect(list.totalResults).toBeGreaterThanOrEqual(3);
    expect(list.Resources.every((g: Record<string, unknown>) => g.members === undefined)).toBe(true);
    const withMembers = await json(await globex("GET", `/Groups?filter=${encodeURIComponent('externalId eq "eng4"')}`));
    expect(withMembers.Resources[0].members).toHaveLength(1);
    const byMember = await json(await globex("GET", `/Groups?filter=${encodeURIComponent(`members.value eq "${withMembers.Resources[0].members[0].value}"`)}`));
    expect(byMember.Resources.map((g: { displayName: string }) => g.displayName)).toContain("Engineering 4");
  });

  it("one organization's token does not reach another's groups", async () => {
    const { token } = await directoryWithToken(h, ws, ids.acme);
    const acme = scimClient(h, ws, ACME, token);
    const group = (await json(await globex("GET", "/Groups?count=1"))).Resources[0];
    expect((await acme("GET", `/Groups/${group.id}`)).status).toBe(404);
    expect((await acme("PATCH", `/Groups/${group.id}`, { schemas: PATCH_SCHEMA, Operations: [{ op: "replace", path: "displayName", value: "x" }] })).status).toBe(404);
    expect((await json(await acme("GET", "/Groups"))).totalResults).toBe(0);
  });
});

describe("tokens", () => {
  it("a rotation with an overlap keeps the previous token working until it ends; a revocation ends one at once; a third working token is refused", async () => {
    const first = await issueToken(h.service.db, { workspaceId: ws, directoryId, overlapHours: 0, now: h.clock.now() });
    const second = await issueToken(h.service.db, { workspaceId: ws, directoryId, overlapHours: 24, now: h.clock.now() });
    expect(second.previous).toEqual([first.id]);
    const status = (token: string) => scimClient(h, ws, GLOBEX, token)("GET", "/ServiceProviderConfig").then((r) => r.status);
    expect(await status(first.token)).toBe(200);
    expect(await status(second.token)).toBe(200);
    await expect(issueToken(h.service.db, { workspaceId: ws, directoryId, overlapHours: 1, now: h.clock.now() })).rejects.toThrow(/revoke one/);
    h.clock.advance(24 * 3_600_000 + 1000);
    expect(await status(first.token)).toBe(401);
    expect(await status(second.token)).toBe(200);
    expect(await revokeToken(h.service.db, { workspaceId: ws, directoryId, tokenId: second.id, now: h.clock.now() })).toBe(true);
    expect(await status(second.token)).toBe(401);
    expect(await revokeToken(h.service.db, { workspaceId: ws, directoryId, tokenId: second.id, now: h.clock.now() })).toBe(false);
    // Only hashes at rest.
    const stored = await h.service.db.select({ hash: scimTokens.tokenHash }).from(scimTokens).where(eq(scimTokens.id, second.id));
    expect(stored[0].hash).not.toContain(second.token.slice(9));
    const third = await issueToken(h.service.db, { workspaceId: ws, directoryId, overlapHours: 0, now: h.clock.now() });
    expect(await status(third.token)).toBe(200);
    const listed = await listTokens(h.service.db, ws, directoryId, h.clock.now());
    expect(listed.find((t) => t.id === third.id)).toMatchObject({ active: true, lastUsedAt: h.clock.now() });
    globex = scimClient(h, ws, GLOBEX, third.token);
  });

  it("a directory turned off refuses its tokens", async () => {
    await h.service.db.update(scimDirectories).set({ enabled: false }).where(eq(scimDirectories.id, directoryId));
    expect((await globex("GET", "/Users")).status).toBe(401);
    await h.service.db.update(scimDirectories).set({ enabled: true }).where(eq(scimDirectories.id, directoryId));
    expect((await globex("GET", "/Users")).status).toBe(200);
  });
});

describe("request log", () => {
  it("records each request (refused ones with their scimType), keeps the last 100, never a token or a body", async () => {
    await globex("GET", `/Users?filter=${encodeURIComponent("nope eq 1")}`);
    await scimClient(h, ws, GLOBEX, "lks_scim_not-a-token")("GET", "/Users");
    const rows = await h.service.db.select().from(scimRequests).where(and(eq(scimRequests.workspaceId, ws), eq(scimRequests.directoryId, directoryId)));
    const refused = rows.filter((r) => r.status === 400 && r.method === "GET");
    expect(refused).toEqual([expect.objectContaining({ path: "/Users", detail: "invalidFilter: Filtering on nope is not supported" })]);
    expect(rows.some((r) => r.status === 401)).toBe(true);
    expect(JSON.stringify(rows)).not.toContain("lks_scim_");
    for (let i = 0; i < KEPT_REQUESTS + 2 * TRIM_EVERY; i++) {
      h.clock.advance(1000);
      await globex("GET", "/ServiceProviderConfig");
    }
    const kept = await h.service.db.select().from(scimRequests).where(and(eq(scimRequests.workspaceId, ws), eq(scimRequests.directoryId, directoryId)));
    // Trimmed every TRIM_EVERY requests: never more than that many past the last 100.
    expect(kept.length).toBeLessThan(KEPT_REQUESTS + TRIM_EVERY);
    expect(kept.length).toBeGreaterThanOrEqual(KEPT_REQUESTS);
    expect((await recentRequests(h.service.db, ws, directoryId)).length).toBe(KEPT_REQUESTS);
  });
});
