// The `apis` section: APIs by audience; a permission dropped from an API is dropped from its grants and roles too.
import { and, eq } from "drizzle-orm";
import { apiGrants, apis, rolePermissions } from "../../../db/schema";
import { newId } from "../../crypto";
import { differs, type ImportContext } from "./context";

/**
 * Dropping a permission from an API also drops it from every grant and role of that API,
 * including ones the file does not mention, so nothing keeps a permission that no longer exists.
 */
export async function importApis(ctx: ImportContext): Promise<void> {
  const { tx, file, now, wid } = ctx;
  const { apiPk } = ctx.ids;
  const existingApis = new Map((await tx.select().from(apis).where(eq(apis.workspaceId, wid))).map((a) => [a.audience, a]));
  for (const api of file.apis) {
    const desired = { name: api.name, active: api.active, permissions: api.permissions };
    const existing = existingApis.get(api.audience);
    if (!existing) {
      const id = newId();
      await tx.insert(apis).values({ id, workspaceId: wid, audience: api.audience, ...desired, createdAt: now, updatedAt: now });
      apiPk.set(api.audience, id);
      ctx.changes++;
      continue;
    }
    apiPk.set(api.audience, existing.id);
    if (!differs(existing, desired)) continue;
    await tx.update(apis).set({ ...desired, updatedAt: now }).where(eq(apis.id, existing.id));
    ctx.changes++;
    const kept = new Set(api.permissions);
    if (existing.permissions.every((p) => kept.has(p))) continue;
    const grantRows = await tx.select().from(apiGrants).where(and(eq(apiGrants.workspaceId, wid), eq(apiGrants.apiId, existing.id)));
    for (const row of grantRows) {
      const permissions = row.permissions.filter((p) => kept.has(p));
      if (permissions.length === row.permissions.length) continue;
      await tx.update(apiGrants).set({ permissions, updatedAt: now }).where(eq(apiGrants.id, row.id));
      ctx.changes++;
    }
    const roleRows = await tx
      .select()
      .from(rolePermissions)
      .where(and(eq(rolePermissions.workspaceId, wid), eq(rolePermissions.apiId, existing.id)));
    for (const row of roleRows) {
      const permissions = row.permissions.filter((p) => kept.has(p));
      if (permissions.length === row.permissions.length) continue;
      await tx.update(rolePermissions).set({ permissions }).where(eq(rolePermissions.id, row.id));
      ctx.changes++;
    }
  }
}
