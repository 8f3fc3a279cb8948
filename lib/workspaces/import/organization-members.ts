// The members of each organization in the file: its list is added; a member it does not list is removed when an import put it there, and kept otherwise unless the import prunes.
import { and, eq, inArray } from "drizzle-orm";
import { organizationMembers, userRoles, users } from "../../../db/schema";
import { newId } from "../../crypto";
import { normalizeEmail } from "../document";
import type { ImportContext, MembershipChange } from "./context";

/**
 * The file governs what it created: a membership an import added (origin `workspace_file`) and
 * the file no longer lists is removed, with the roles held in the organization. One added in the
 * console or by a first sign-in through a connection is not the file's: it is kept (and reported)
 * unless the import was asked to prune (`pruneMembers`), which removes it too.
 */
export async function importOrganizationMembers(ctx: ImportContext): Promise<void> {
  const { tx, file, now, wid } = ctx;
  const { orgPk, userPk } = ctx.ids;
  const fileOrgIds = [...orgPk.values()];
  const existingMembers = fileOrgIds.length
    ? await tx
        .select({ member: organizationMembers, email: users.email })
        .from(organizationMembers)
        .innerJoin(users, eq(users.id, organizationMembers.userId))
        .where(and(eq(organizationMembers.workspaceId, wid), inArray(organizationMembers.organizationId, fileOrgIds)))
    : [];
  for (const org of file.organizations) {
    const orgId = orgPk.get(org.slug) as string;
    const wanted = new Set(org.members.map((m) => userPk.get(normalizeEmail(m)) as string));
    // The file says who of its members administers the organization (absent: none).
    const administrators = new Set((org.administrators ?? []).map((m) => userPk.get(normalizeEmail(m)) as string));
    const current = existingMembers.filter((m) => m.member.organizationId === orgId);
    for (const { member, email } of [...current].sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0))) {
      if (wanted.has(member.userId)) continue;
      const change: MembershipChange = { organization: org.slug, email, origin: member.origin };
      if (member.origin !== "workspace_file" && !ctx.opts.pruneMembers) {
        ctx.members.kept.push(change);
        continue;
      }
      await tx.delete(organizationMembers).where(eq(organizationMembers.id, member.id));
      await tx
        .delete(userRoles)
        .where(and(eq(userRoles.workspaceId, wid), eq(userRoles.userId, member.userId), eq(userRoles.organizationId, orgId)));
      ctx.members.removed.push(change);
      ctx.changes++;
    }
    for (const userId of wanted) {
      const existing = current.find((m) => m.member.userId === userId);
      if (existing) {
        if (existing.member.administrator !== administrators.has(userId)) {
          await tx.update(organizationMembers).set({ administrator: administrators.has(userId) }).where(eq(organizationMembers.id, existing.member.id));
          ctx.changes++;
        }
        continue;
      }
      await tx.insert(organizationMembers).values({ id: newId(), workspaceId: wid, organizationId: orgId, userId, origin: "workspace_file", administrator: administrators.has(userId), createdAt: now });
      ctx.changes++;
    }
  }
}
