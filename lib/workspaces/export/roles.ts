// The `roles` section as the workspace holds it: sorted by name, each role's permissions by audience.
import { eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { rolePermissions, roles } from "../../../db/schema";
import type { WorkspaceDocument } from "../document";
import { byKey, namesById } from "./shared";

export async function exportRoles(db: Database, wid: string): Promise<Pick<WorkspaceDocument, "roles">> {
  const [roleRows, permissionRows, audienceById] = await Promise.all([
    db.select().from(roles).where(eq(roles.workspaceId, wid)),
    db.select().from(rolePermissions).where(eq(rolePermissions.workspaceId, wid)),
    namesById.apis(db, wid),
  ]);
  return {
    roles: roleRows.sort(byKey((r) => r.name)).map((r) => ({
      name: r.name,
      ...(r.description === null ? {} : { description: r.description }),
      permissions: permissionRows
        .filter((rp) => rp.roleId === r.id)
        .map((rp) => ({ audience: audienceById.get(rp.apiId) as string, permissions: rp.permissions }))
        .sort(byKey((p) => p.audience)),
    })),
  };
}
