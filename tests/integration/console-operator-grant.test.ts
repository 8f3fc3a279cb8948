/**
 * `latchkey operator grant`: an existing operator gets (or changes) a role in a workspace created
 * by `workspace import` after setup, so it appears in their console; audited; refusals exit 1. An
 * address with no proven account gets an invitation instead (operator-mailbox.test.ts too).
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, operatorInvitations, operatorMemberships, users } from "../../db/schema";
import { sha256Hex } from "../../lib/crypto";
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
    expect(await cli("operator", "grant", W, "not an address", "admin")).toMatchObject({ code: 1, err: expect.stringContaining("is not an email address") });
    expect(await cli("operator", "grant", W, "ops@operators.test", "superuser")).toMatchObject({ code: 1, err: expect.stringContaining('Unknown role "superuser"') });
    expect(await cli("operator", "grant", "system", "ops@operators.test", "admin")).toMatchObject({ code: 1, err: expect.stringContaining("only role is owner") });
    expect(await cli("operator", "grant", W, "ops@operators.test")).toMatchObject({ code: 2, err: expect.stringContaining("Usage: latchkey operator grant") });
  });

  it("invites an address that no operator account has, instead of making anyone a member", async () => {
    const out = await cli("operator", "grant", W, "Nobody@operators.test", "admin");
    expect(out.code).toBe(0);
    expect(out.out).toContain(`No operator account has proven Nobody@operators.test: invited it to become admin of workspace ${W} instead.`);
    const link = new URL(out.out.match(/https:\/\/\S+/)![0]);
    expect(link.pathname).toBe("/console/invitation");
    const [invitation] = await h.service.db.select().from(operatorInvitations).where(and(eq(operatorInvitations.workspaceId, W), eq(operatorInvitations.emailNormalized, "nobody@operators.test")));
    expect(invitation).toMatchObject({ role: "admin", invitedBy: null, acceptedAt: null, tokenHash: sha256Hex(link.searchParams.get("token")!) });
    expect(await h.service.db.select().from(users).where(eq(users.emailNormalized, "nobody@operators.test"))).toHaveLength(0);
    const events = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, "operator.invited")));
    expect(events.map((e) => e.data)).toEqual([{ via: "cli", role: "admin", invitation_id: invitation.id }]);
    // The system workspace too: nobody becomes an installation operator by an address alone.
    expect((await cli("operator", "grant", "system", "nobody@operators.test", "owner")).out).toContain("invited it to become an installation operator instead");
    expect(await h.service.db.select().from(operatorMemberships).where(eq(operatorMemberships.workspaceId, SYSTEM_WORKSPACE_ID))).toHaveLength(0);
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
