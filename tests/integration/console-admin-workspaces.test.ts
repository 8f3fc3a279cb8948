/**
 * Workspace settings in the console: rename (admins and owners) and delete (owners only, typed
 * workspace id, never the system workspace). Deleting removes everything the workspace held, its
 * issuer stops answering, and the event is kept in the system workspace's audit log.
 */
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { accessTokens, auditEvents, clients, grants, hostedSessions, operatorMemberships, users, workspaces } from "../../db/schema";
import { runOperation } from "../../lib/console/operation";
import { operations } from "../../lib/console/registry";
import { ensureSystemWorkspace, SYSTEM_WORKSPACE_ID } from "../../lib/console/system";
import { listOperatorWorkspaces } from "../../lib/console/workspaces";
import { ADA, M2M, SPA, standardWorkspace } from "../helpers/fixtures";
import { call, seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { auditRows, humanTokens, insertWorkloadToken } from "../helpers/lifecycle";
import { consoleSignIn, createConsoleHarness, createOperator } from "./console-helpers";

let h: Harness;
const ws = uniqueWorkspaceId("cadm-ws");
const other = uniqueWorkspaceId("cadm-other");
let owner: string;
let admin: string;
let viewer: string;
let ownerId: string;

beforeAll(async () => {
  h = await createConsoleHarness();
  await seed(h, standardWorkspace(ws));
  await seed(h, standardWorkspace(other));
  await ensureSystemWorkspace(h.service);
  ownerId = await createOperator(h, "owner@ws.test", { [ws]: "owner", [other]: "owner" });
  await createOperator(h, "admin@ws.test", { [ws]: "admin" });
  await createOperator(h, "viewer@ws.test", { [ws]: "viewer" });
  owner = (await consoleSignIn(h, "owner@ws.test")).token;
  admin = (await consoleSignIn(h, "admin@ws.test")).token;
  viewer = (await consoleSignIn(h, "viewer@ws.test")).token;
});

const run = (token: string, workspaceId: string, name: "renameWorkspace" | "deleteWorkspace", input: Record<string, unknown>) =>
  runOperation(h.service, token, workspaceId, operations[name] as (typeof operations)["deleteWorkspace"], input);

const workspaceRow = async (id: string) => (await h.service.db.select().from(workspaces).where(eq(workspaces.id, id)))[0] ?? null;

describe("renaming a workspace", () => {
  it("is refused to a viewer and rejects an empty name", async () => {
    await expect(run(viewer, ws, "renameWorkspace", { name: "By viewer" })).rejects.toMatchObject({ code: "forbidden" });
    const empty = await run(admin, ws, "renameWorkspace", { name: "  " });
    expect(empty.ok).toBe(false);
    if (!empty.ok) expect(empty.fieldErrors.name).toBe("Enter a name");
  });

  it("lets an admin rename it, audited once; the id and issuer stay", async () => {
    expect((await run(admin, ws, "renameWorkspace", { name: "Storefront production" })).ok).toBe(true);
    expect((await workspaceRow(ws)).name).toBe("Storefront production");
    // Saving the same name again changes nothing and writes nothing.
    expect((await run(admin, ws, "renameWorkspace", { name: "Storefront production" })).ok).toBe(true);
    const events = await auditRows(h, ws, "console.workspace.renamed");
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ name: "Storefront production", previous_name: `Workspace ${ws}` });
    expect((await call(h, `/t/${ws}/.well-known/openid-configuration`)).status).toBe(200);
  });
});

describe("deleting a workspace", () => {
  it("is for owners only: an admin is refused", async () => {
    await expect(run(admin, ws, "deleteWorkspace", { confirm: ws })).rejects.toMatchObject({ code: "forbidden" });
    await expect(run(viewer, ws, "deleteWorkspace", { confirm: ws })).rejects.toMatchObject({ code: "forbidden" });
    expect(await workspaceRow(ws)).not.toBeNull();
  });

  it("requires the typed workspace id, on the server", async () => {
    for (const confirm of [undefined, "", "Storefront production", other]) {
      const out = await run(owner, ws, "deleteWorkspace", confirm === undefined ? {} : { confirm });
      expect(out.ok).toBe(false);
      if (!out.ok) expect(out.fieldErrors.confirm).toMatch(/Type the workspace id/);
    }
    expect(await workspaceRow(ws)).not.toBeNull();
  });

  it("never reaches the system workspace (it is no operator's workspace in the console)", async () => {
    await expect(run(owner, SYSTEM_WORKSPACE_ID, "deleteWorkspace", { confirm: SYSTEM_WORKSPACE_ID })).rejects.toMatchObject({ code: "not_found" });
    expect(await workspaceRow(SYSTEM_WORKSPACE_ID)).not.toBeNull();
  });

  it("removes everything in it, ends its tokens and sessions, and is audited once in the system workspace", async () => {
    const tokens = await humanTokens(h, ws, SPA, ADA, { scope: "openid" });
    const { token: workload } = await insertWorkloadToken(h, ws, M2M.client_id);
    expect((await call(h, `/t/${ws}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200);

    const checkWorkload = () =>
      call(h, `/t/${ws}/authorization/check`, {
        method: "POST",
        body: JSON.stringify({ resource: "https://api.example.test", permission: "read:things", organization_id: null }),
        headers: { "content-type": "application/json", authorization: `Bearer ${workload}` },
      });
    expect(await (await checkWorkload()).json()).toEqual({ allowed: true });

    const out = await run(owner, ws, "deleteWorkspace", { confirm: ws });
    expect(out).toEqual({ ok: true, result: { deleted: ws } });

    const db = h.service.db;
    expect(await workspaceRow(ws)).toBeNull();
    for (const table of [clients, users, grants, hostedSessions, accessTokens, operatorMemberships, auditEvents] as const) {
      expect(await db.select().from(table).where(eq(table.workspaceId, ws))).toHaveLength(0);
    }
    // No token of it is accepted any more (the issuer itself stops resolving once the router's few-second workspace cache lapses).
    expect((await call(h, `/t/${ws}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).not.toBe(200);
    expect((await checkWorkload()).status).not.toBe(200);
    // The other workspace is untouched, and the owner's console lists only it.
    expect(await workspaceRow(other)).not.toBeNull();
    expect((await listOperatorWorkspaces(h.service, ownerId)).map((w) => w.id)).toEqual([other]);

    const events = await auditRows(h, SYSTEM_WORKSPACE_ID, "console.workspace.deleted");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor: ownerId, subject: ws, data: expect.objectContaining({ operator: "owner@ws.test", name: "Storefront production" }) });
    // Its operators no longer reach it.
    await expect(run(owner, ws, "renameWorkspace", { name: "Back" })).rejects.toMatchObject({ code: "not_found" });
  });
});
