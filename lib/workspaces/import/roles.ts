// The `roles` section: roles by name and their permissions (one row per role and API), replaced by the file's.
import { eq } from "drizzle-orm";
import { rolePermissions, roles } from "../../../db/schema";
import { newId } from "../../crypto";
import { differs, type ImportContext } from "./context";

export async function importRoles(ctx: ImportContext): Promise<void> {
  const { tx, file, now, wid } = ctx;
  const { apiPk, rolePk } = ctx.ids;
  const existingRoles = new Map((await tx.select().from(roles).where(eq(roles.workspaceId, wid))).map((r) => [r.name, r]));
  const existingRolePermissions = await tx.select().from(rolePermissions).where(eq(rolePermissions.workspaceId, wid));
  for (const role of file.roles) {
    const desired = { description: role.description ?? null };
    const existing = existingRoles.get(role.name);
    let id: string;
    if (!existing) {
      id = newId();
      await tx.insert(roles).values({ id, workspaceId: wid, name: role.name, ...desired, createdAt: now, updatedAt: now });
      ctx.changes++;
    } else {
      id = existing.id;
      if (differs(existing, desired)) {
        await tx.update(roles).set({ ...desired, updatedAt: now }).where(eq(roles.id, id));
        ctx.changes++;
      }
    }
    rolePk.set(role.name, id);
    const wanted = new Map(role.permissions.map((p) => [apiPk.get(p.audience) as string, p.permissions]));
    const current = existingRolePermissions.filter((rp) => rp.roleId === id);
    for (const row of current) {
      const permissions = wanted.get(row.apiId);
      if (permissions === undefined) {
        await tx.delete(rolePermissions).where(eq(rolePermissions.id, row.id));
        ctx.changes++;
      } else if (differs(row, { permissions })) {
        await tx.update(rolePermissions).set({ permissions }).where(eq(rolePermissions.id, row.id));
        ctx.changes++;
      }
    }
    for (const [apiId, permissions] of wanted) {
      if (current.some((row) => row.apiId === apiId)) continue;
      await tx.insert(rolePermissions).values({ id: newId(), workspaceId: wid, roleId: id, apiId, permissions });
      ctx.changes++;
    }
  }
}
