// Roles and the permissions each grants per API: listing them and setting a role's permissions on one API.
import { and, asc, eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { apis, rolePermissions, roles } from "../../../db/schema";
import { newId } from "../../crypto";
import { audit, type Change } from "./change";
import { checkPermissions, findApi, findRoleId } from "./lookups";

export interface RoleInfo {
  id: string;
  name: string;
  description: string | null;
  /** Per API, sorted by audience. */
  permissions: { audience: string; permissions: string[] }[];
}

export async function listRoles(db: Database, workspaceId: string): Promise<RoleInfo[]> {
  const [roleRows, permissionRows] = await Promise.all([
    db.select().from(roles).where(eq(roles.workspaceId, workspaceId)).orderBy(asc(roles.name)),
    db
      .select({ roleId: rolePermissions.roleId, audience: apis.audience, permissions: rolePermissions.permissions })
      .from(rolePermissions)
      .innerJoin(apis, eq(apis.id, rolePermissions.apiId))
      .where(eq(rolePermissions.workspaceId, workspaceId))
      .orderBy(asc(apis.audience)),
  ]);
  return roleRows.map((r) => ({
    id: r.id,
    name: r.name,
    description: r.description,
    permissions: permissionRows.filter((p) => p.roleId === r.id).map(({ audience, permissions }) => ({ audience, permissions })),
  }));
}

/** Sets the permissions a role grants on one API; an empty list removes the API from the role. */
export async function setRolePermissions(db: Database, change: Change & { role: string; audience: string; permissions: string[] }): Promise<void> {
  const { workspaceId } = change;
  const roleId = await findRoleId(db, workspaceId, change.role);
  const api = await findApi(db, workspaceId, change.audience);
  const permissions = checkPermissions(api, change.permissions);
  if (permissions.length === 0) {
    await db.delete(rolePermissions).where(and(eq(rolePermissions.workspaceId, workspaceId), eq(rolePermissions.roleId, roleId), eq(rolePermissions.apiId, api.id)));
  } else {
    await db
      .insert(rolePermissions)
      .values({ id: newId(), workspaceId, roleId, apiId: api.id, permissions })
      .onConflictDoUpdate({ target: [rolePermissions.workspaceId, rolePermissions.roleId, rolePermissions.apiId], set: { permissions } });
  }
  await db.update(roles).set({ updatedAt: change.clock.now() }).where(eq(roles.id, roleId));
  await audit(db, change, "authz.role.permissions_set", { role: change.role, audience: change.audience, permissions });
}
