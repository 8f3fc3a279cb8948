// Users' roles, at workspace level or within an organization: listing, assigning and removing them.
import { and, eq, isNull } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { organizations, roles, userRoles } from "../../../db/schema";
import { newId } from "../../crypto";
import { audit, type Change } from "./change";
import { AuthzModelError } from "./errors";
import { findOrganizationId, findRoleId, isMember, requireUser } from "./lookups";
import type { OrganizationRef } from "./organizations";

export interface UserRoleInfo {
  role: string;
  /** Null for a workspace-level role. */
  organization: OrganizationRef | null;
}

/** A user's roles: workspace-level ones first, then per organization; sorted by name. */
export async function listUserRoles(db: Database, workspaceId: string, userId: string): Promise<UserRoleInfo[]> {
  const rows = await db
    .select({ role: roles.name, orgId: organizations.id, orgSlug: organizations.slug, orgName: organizations.name })
    .from(userRoles)
    .innerJoin(roles, eq(roles.id, userRoles.roleId))
    .leftJoin(organizations, eq(organizations.id, userRoles.organizationId))
    .where(and(eq(userRoles.workspaceId, workspaceId), eq(userRoles.userId, userId)));
  return rows
    .map((r) => ({ role: r.role, organization: r.orgId === null ? null : { id: r.orgId, slug: r.orgSlug!, name: r.orgName! } }))
    .sort((a, b) => {
      const ka = `${a.organization ? `1${a.organization.slug}` : "0"}\u0000${a.role}`;
      const kb = `${b.organization ? `1${b.organization.slug}` : "0"}\u0000${b.role}`;
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    });
}

/**
 * Gives a user a role at workspace level (`organization` null) or within an organization, of
 * which the user must be a member. Assigning a role the user already holds changes nothing.
 * Returns whether a row was added.
 */
export async function assignUserRole(db: Database, change: Change & { userId: string; role: string; organization: string | null }): Promise<boolean> {
  const { workspaceId } = change;
  await requireUser(db, workspaceId, change.userId);
  const roleId = await findRoleId(db, workspaceId, change.role);
  let organizationId: string | null = null;
  if (change.organization !== null) {
    organizationId = await findOrganizationId(db, workspaceId, change.organization);
    if (!(await isMember(db, workspaceId, organizationId, change.userId))) {
      throw new AuthzModelError("invalid_argument", `The user must be a member of organization ${JSON.stringify(change.organization)} to hold a role in it`);
    }
  }
  const inserted = await db
    .insert(userRoles)
    .values({ id: newId(), workspaceId, userId: change.userId, roleId, organizationId, createdAt: change.clock.now() })
    .onConflictDoNothing()
    .returning({ id: userRoles.id });
  if (inserted.length > 0) await audit(db, change, "authz.user_role.assigned", { user_id: change.userId, role: change.role, organization: change.organization });
  return inserted.length > 0;
}

/** Takes a role from a user, at workspace level or in one organization. Returns whether one was removed. */
export async function removeUserRole(db: Database, change: Change & { userId: string; role: string; organization: string | null }): Promise<boolean> {
  const { workspaceId } = change;
  const roleId = await findRoleId(db, workspaceId, change.role);
  const organizationId = change.organization === null ? null : await findOrganizationId(db, workspaceId, change.organization);
  const removed = await db
    .delete(userRoles)
    .where(
      and(
        eq(userRoles.workspaceId, workspaceId),
        eq(userRoles.userId, change.userId),
        eq(userRoles.roleId, roleId),
        organizationId === null ? isNull(userRoles.organizationId) : eq(userRoles.organizationId, organizationId),
      ),
    )
    .returning({ id: userRoles.id });
  if (removed.length > 0) await audit(db, change, "authz.user_role.removed", { user_id: change.userId, role: change.role, organization: change.organization });
  return removed.length > 0;
}
