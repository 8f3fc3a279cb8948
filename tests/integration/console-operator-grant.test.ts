/**
 * `latchkey operator grant`: an existing operator gets (or changes) a role in a workspace created
 * by `workspace import` after setup, so it appears in their console; audited; refusals exit 1.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, operatorMemberships } from "../../db/schema";
import { runCommand } from "../../lib/cli/commands";
import { requireWorkspaceRole } from "../../lib/console/authz";
import { ensureSystemWorkspace, SYSTEM_WORKSPACE_ID } from "../../lib/console/system";
import { canCreateWorkspaces, createWorkspace, listOperatorWorkspaces } from "../../lib/console/workspaces";
import { seed, uniqueWorkspaceId, type Harness } from "../helpers/harness";
import { consoleSignIn, createConsoleHarness, createOperator } from "./console-helpers";

let h: Harness;
const W = uniqueWorkspaceId("granted");
let operator: string;

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await runCommand(h.service.db, h.service.config, h.clock, { argv }, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

beforeAll(async () => {
  h = await createConsoleHarness();
  await ensureSystemWorkspace(h.service);
  operator = await createOperator(h, "ops@operators.test", {});
  // Imported after setup: no operator has it yet.
  await seed(h, { id: W, name: "Imported" });
});

describe("latchkey operator grant", () => {
  it("makes an imported workspace reachable in the operator's console, with the role given; changes it; audited", async () => {
    const token = (await consoleSignIn(h, "ops@operators.test")).token;
    await expect(requireWorkspaceRole(h.service, token, W, "viewer")).rejects.toBeTruthy();

    expect(await cli("operator", "grant", W, "OPS@operators.test", "admin")).toEqual({ code: 0, out: `OPS@operators.test is now admin of workspace ${W}.\n`, err: "" });
    expect((await requireWorkspaceRole(h.service, token, W, "admin")).role).toBe("admin");
    expect((await cli("operator", "grant", W, "ops@operators.test", "admin")).out).toBe(`ops@operators.test is already admin of workspace ${W}.\n`);
    expect((await cli("operator", "grant", W, "ops@operators.test", "owner")).out).toBe(`ops@operators.test is now owner of workspace ${W} (was admin).\n`);

    const rows = await h.service.db.select().from(operatorMemberships).where(and(eq(operatorMemberships.workspaceId, W), eq(operatorMemberships.operatorUserId, operator)));
    expect(rows.map((r) => r.role)).toEqual(["owner"]);
    const events = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, "operator.granted")));
    expect(events.map((e) => e.data)).toEqual([
      { via: "cli", role: "admin", previous_role: null },
      { via: "cli", role: "owner", previous_role: "admin" },
    ]);
  });

  it("refuses an unknown workspace, operator or role (exit 1), and a malformed command line (exit 2)", async () => {
    expect(await cli("operator", "grant", "no-such-workspace", "ops@operators.test", "admin")).toMatchObject({ code: 1, err: 'No workspace "no-such-workspace".\n' });
    expect(await cli("operator", "grant", W, "nobody@operators.test", "admin")).toMatchObject({ code: 1, err: expect.stringContaining('No operator "nobody@operators.test"') });
    expect(await cli("operator", "grant", W, "ops@operators.test", "superuser")).toMatchObject({ code: 1, err: expect.stringContaining('Unknown role "superuser"') });
    expect(await cli("operator", "grant", "system", "ops@operators.test", "admin")).toMatchObject({ code: 1, err: expect.stringContaining("only role is owner") });
    expect(await cli("operator", "grant", W, "ops@operators.test")).toMatchObject({ code: 2, err: expect.stringContaining("Usage: latchkey operator grant") });
  });

  it("makes an installation operator (owner of the system workspace), who may create workspaces; the system workspace stays out of the console", async () => {
    expect(await canCreateWorkspaces(h.service, operator)).toBe(false);
    expect(await cli("operator", "grant", "system", "ops@operators.test", "owner")).toEqual({ code: 0, out: "ops@operators.test is now an installation operator.\n", err: "" });
    expect(await canCreateWorkspaces(h.service, operator)).toBe(true);
    expect((await cli("operator", "grant", "system", "ops@operators.test", "owner")).out).toBe("ops@operators.test is already an installation operator.\n");
    const token = (await consoleSignIn(h, "ops@operators.test")).token;
    expect((await listOperatorWorkspaces(h.service, operator)).map((w) => w.id)).not.toContain(SYSTEM_WORKSPACE_ID);
    await expect(requireWorkspaceRole(h.service, token, SYSTEM_WORKSPACE_ID, "viewer")).rejects.toMatchObject({ code: "not_found" });
    const id = uniqueWorkspaceId("byops");
    expect(await createWorkspace(h.service, token, { id, name: "By the installation operator" })).toMatchObject({ ok: true });
  });
});
