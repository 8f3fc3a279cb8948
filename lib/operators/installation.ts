/**
 * Installation operators: the operators who run this Latchkey installation rather than one
 * workspace of it, i.e. owners of the reserved `system` workspace. Setup makes the first operator
 * one; `latchkey operator grant system <email> owner` makes another. Only they create workspaces
 * and change operator accounts (disable, enable), which are installation-wide: a workspace owner
 * is a tenant, and a tenant's choice must not reach another workspace's operators.
 *
 * A system membership never makes the system workspace reachable in the console
 * (lib/console/authz.ts treats it as not found) nor listed among the operator's workspaces.
 */
import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { operatorMemberships } from "../../db/schema";
import { SYSTEM_WORKSPACE_ID } from "./system";

export async function isInstallationOperator(db: Database, operatorUserId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: operatorMemberships.id })
    .from(operatorMemberships)
    .where(and(eq(operatorMemberships.operatorUserId, operatorUserId), eq(operatorMemberships.workspaceId, SYSTEM_WORKSPACE_ID), eq(operatorMemberships.role, "owner")))
    .limit(1);
  return !!row;
}
