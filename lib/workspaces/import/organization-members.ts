// The members of each organization in the file, replaced by its list; leaving an organization also ends the roles held in it.
import { and, eq, inArray } from "drizzle-orm";
import { organizationMembers, userRoles } from "../../../db/schema";
import { newId } from "../../crypto";
import { normalizeEmail } from "../document";
import type { ImportContext } from "./context";

export async function importOrganizationMembers(ctx: ImportContext): Promise<void> {
  const { tx, file, now, wid } = ctx;
  const { orgPk, userPk } = ctx.ids;
  const fileOrgIds = [...orgPk.values()];
  const existingMembers = fileOrgIds.length
    ? await tx
        .select()
        .from(organizationMembers)
        .where(and(eq(organizationMembers.workspaceId, wid), inArray(organizationMembers.organizationId, fileOrgIds)))
    : [];
  for (const org of file.organizations) {
    const orgId = orgPk.get(org.slug) as string;
    const wanted = new Set(org.members.map((m) => userPk.get(normalizeEmail(m)) as string));
    const current = existingMembers.filter((m) => m.organizationId === orgId);
    for (const member of current) {
      if (wanted.has(member.userId)) continue;
      await tx.delete(organizationMembers).where(eq(organizationMembers.id, member.id));
      await tx
        .delete(userRoles)
        .where(and(eq(userRoles.workspaceId, wid), eq(userRoles.userId, member.userId), eq(userRoles.organizationId, orgId)));
      ctx.changes++;
    }
    for (const userId of wanted) {
      if (current.some((m) => m.userId === userId)) continue;
      await tx.insert(organizationMembers).values({ id: newId(), workspaceId: wid, organizationId: orgId, userId, origin: "workspace_file", createdAt: now });
      ctx.changes++;
    }
  }
}
