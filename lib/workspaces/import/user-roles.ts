// The roles of each user in the file (workspace-wide or per organization), replaced by the user's list.
import { and, eq, inArray } from "drizzle-orm";
import { userRoles } from "../../../db/schema";
import { newId } from "../../crypto";
import { normalizeEmail, type UserRoleRef } from "../document";
import { chunks, type ImportContext } from "./context";

export async function importUserRoles(ctx: ImportContext): Promise<void> {
  const { tx, file, now, wid } = ctx;
  const { rolePk, orgPk, userPk } = ctx.ids;
  const fileUserIds = [...new Set(userPk.values())];
  const existingUserRoles: (typeof userRoles.$inferSelect)[] = [];
  for (const part of chunks(fileUserIds)) {
    existingUserRoles.push(
      ...(await tx.select().from(userRoles).where(and(eq(userRoles.workspaceId, wid), inArray(userRoles.userId, part)))),
    );
  }
  const roleKey = (roleId: string, organizationId: string | null) => `${roleId} ${organizationId ?? ""}`;
  for (const user of file.users) {
    const userId = userPk.get(normalizeEmail(user.email)) as string;
    const wanted = new Map(
      user.roles.map((ref: UserRoleRef) => {
        const roleId = rolePk.get(typeof ref === "string" ? ref : ref.role) as string;
        const organizationId = typeof ref === "string" ? null : (orgPk.get(ref.organization) as string);
        return [roleKey(roleId, organizationId), { roleId, organizationId }];
      }),
    );
    const current = existingUserRoles.filter((ur) => ur.userId === userId);
    for (const row of current) {
      if (wanted.has(roleKey(row.roleId, row.organizationId))) continue;
      await tx.delete(userRoles).where(eq(userRoles.id, row.id));
      ctx.changes++;
    }
    for (const [key, { roleId, organizationId }] of wanted) {
      if (current.some((row) => roleKey(row.roleId, row.organizationId) === key)) continue;
      await tx.insert(userRoles).values({ id: newId(), workspaceId: wid, userId, roleId, organizationId, createdAt: now });
      ctx.changes++;
    }
  }
}
