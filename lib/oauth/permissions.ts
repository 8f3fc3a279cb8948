import { and, eq, isNull } from "drizzle-orm";
import { rolePermissions, userRoles } from "../../db/schema";
import type { Database } from "../../db/client";

/** Permissions a user holds now on one API through roles at workspace level (organizationId null) or in one organization. */
export async function userPermissions(db: Database, workspaceId: string, userId: string, apiId: string, organizationId: string | null = null): Promise<Set<string>> {
  const rows = await db
    .select({ permissions: rolePermissions.permissions })
    .from(userRoles)
    .innerJoin(rolePermissions, and(eq(rolePermissions.roleId, userRoles.roleId), eq(rolePermissions.apiId, apiId)))
    .where(
      and(
        eq(userRoles.workspaceId, workspaceId),
        eq(userRoles.userId, userId),
        organizationId === null ? isNull(userRoles.organizationId) : eq(userRoles.organizationId, organizationId),
      ),
    );
  const out = new Set<string>();
  for (const r of rows) for (const p of r.permissions) out.add(p);
  return out;
}
