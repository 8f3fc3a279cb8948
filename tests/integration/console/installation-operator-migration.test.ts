/**
 * Migration 0016: on an installation set up before installation operators existed, the operator
 * who completed the console setup (its audit event names them) becomes one, once; nobody else does.
 */
import { readFileSync } from "node:fs";
import { and, eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { operatorMemberships } from "../../../db/schema";
import { recordAudit } from "../../../lib/audit/events";
import { isInstallationOperator } from "../../../lib/operators/installation";
import { ensureSystemWorkspace, SYSTEM_WORKSPACE_ID } from "../../../lib/console/system";
import { canCreateWorkspaces } from "../../../lib/console/workspaces";
import { seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { createConsoleHarness, createOperator } from "../console-helpers";

const MIGRATION = readFileSync(new URL("../../../db/migrations/0016_installation_operator.sql", import.meta.url), "utf8");

let h: Harness;
const W = uniqueWorkspaceId("legacy");

beforeAll(async () => {
  h = await createConsoleHarness();
  await ensureSystemWorkspace(h.service);
  await seed(h, { id: W, name: "Set up long ago" });
});

describe("0016_installation_operator", () => {
  it("makes the operator who completed setup an installation operator, idempotently, and no one else", async () => {
    // As setup used to leave it: owner of every workspace, no system membership.
    const first = await createOperator(h, "first@legacy.test", { [W]: "owner" });
    const tenant = await createOperator(h, "tenant@legacy.test", { [W]: "owner" });
    await recordAudit(h.service.db, { workspaceId: SYSTEM_WORKSPACE_ID, type: "console.setup.completed", actor: first, data: { operator_email: "first@legacy.test", workspaces: [W] }, at: h.clock.now() });
    // An event of that type in a tenant's log names no one.
    await recordAudit(h.service.db, { workspaceId: W, type: "console.setup.completed", actor: tenant, at: h.clock.now() });
    expect(await canCreateWorkspaces(h.service, first)).toBe(false);

    await h.service.db.execute(sql.raw(MIGRATION));
    await h.service.db.execute(sql.raw(MIGRATION));

    expect(await isInstallationOperator(h.service.db, first)).toBe(true);
    expect(await canCreateWorkspaces(h.service, first)).toBe(true);
    expect(await isInstallationOperator(h.service.db, tenant)).toBe(false);
    const rows = await h.service.db.select().from(operatorMemberships).where(and(eq(operatorMemberships.workspaceId, SYSTEM_WORKSPACE_ID), eq(operatorMemberships.operatorUserId, first)));
    expect(rows.map((r) => r.role)).toEqual(["owner"]);
  });
});
