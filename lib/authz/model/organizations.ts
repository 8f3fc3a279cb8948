// Organizations and their members: listing them, adding and removing a member (with the roles held there), ids by slug.
import { and, asc, eq, inArray } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { organizationMembers, organizations, userRoles, users } from "../../../db/schema";
import { newId } from "../../crypto";
import { audit, type Change } from "./change";
import { findOrganizationId, requireUser } from "./lookups";

export interface OrganizationRef {
  id: string;
  slug: string;
  name: string;
}

export interface OrganizationInfo extends OrganizationRef {
  active: boolean;
  members: { userId: string; email: string; name: string | null }[];
}

export async function listOrganizations(db: Database, workspaceId: string): Promise<OrganizationInfo[]> {
  const [orgRows, memberRows] = await Promise.all([
    db.select().from(organizations).where(eq(organizations.workspaceId, workspaceId)).orderBy(asc(organizations.slug)),
    db
      .select({ organizationId: organizationMembers.organizationId, userId: users.id, email: users.email, name: users.name })
      .from(organizationMembers)
      .innerJoin(users, eq(users.id, organizationMembers.userId))
      .where(eq(organizationMembers.workspaceId, workspaceId))
      .orderBy(asc(users.emailNormalized)),
  ]);
  return orgRows.map((o) => ({
    id: o.id,
    slug: o.slug,
    name: o.name,
    active: o.active,
    members: memberRows.filter((m) => m.organizationId === o.id).map(({ userId, email, name }) => ({ userId, email, name })),
  }));
}

/** Makes a user a member of an organization. Returns whether the user was not one already. */
export async function addOrganizationMember(db: Database, change: Change & { organization: string; userId: string }): Promise<boolean> {
  const { workspaceId } = change;
  await requireUser(db, workspaceId, change.userId);
  const organizationId = await findOrganizationId(db, workspaceId, change.organization);
  const inserted = await db
    .insert(organizationMembers)
    .values({ id: newId(), workspaceId, organizationId, userId: change.userId, createdAt: change.clock.now() })
    .onConflictDoNothing()
    .returning({ id: organizationMembers.id });
  if (inserted.length > 0) await audit(db, change, "authz.organization.member_added", { organization: change.organization, user_id: change.userId });
  return inserted.length > 0;
}

/** Removes a member, and with it every role the user held in that organization. */
export async function removeOrganizationMember(db: Database, change: Change & { organization: string; userId: string }): Promise<boolean> {
  const { workspaceId } = change;
  const organizationId = await findOrganizationId(db, workspaceId, change.organization);
  return db.transaction(async (tx) => {
    const removed = await tx
      .delete(organizationMembers)
      .where(
        and(
          eq(organizationMembers.workspaceId, workspaceId),
          eq(organizationMembers.organizationId, organizationId),
          eq(organizationMembers.userId, change.userId),
        ),
      )
      .returning({ id: organizationMembers.id });
    await tx
      .delete(userRoles)
      .where(and(eq(userRoles.workspaceId, workspaceId), eq(userRoles.userId, change.userId), eq(userRoles.organizationId, organizationId)));
    if (removed.length > 0) await audit(tx, change, "authz.organization.member_removed", { organization: change.organization, user_id: change.userId });
    return removed.length > 0;
  });
}

/** Ids of organizations by slug, for callers that hold slugs (tests, the console's forms). */
export async function organizationIds(db: Database, workspaceId: string, slugs: string[]): Promise<Map<string, string>> {
  if (slugs.length === 0) return new Map();
  const rows = await db
    .select({ id: organizations.id, slug: organizations.slug })
    .from(organizations)
    .where(and(eq(organizations.workspaceId, workspaceId), inArray(organizations.slug, slugs)));
  return new Map(rows.map((r) => [r.slug, r.id]));
}
