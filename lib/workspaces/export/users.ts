// The `users` section as the workspace holds it: sorted by normalized email; passwords as `password_hash`, enrolled factors never.
import { eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { userRoles, users } from "../../../db/schema";
import type { WorkspaceDocument } from "../document";
import { byKey, namesById } from "./shared";

export async function exportUsers(db: Database, wid: string): Promise<Pick<WorkspaceDocument, "users">> {
  const [userRows, userRoleRows, roleById, slugById] = await Promise.all([
    db.select().from(users).where(eq(users.workspaceId, wid)),
    db.select().from(userRoles).where(eq(userRoles.workspaceId, wid)),
    namesById.roles(db, wid),
    namesById.organizations(db, wid),
  ]);
  return {
    users: userRows.sort(byKey((u) => u.emailNormalized)).map((u) => {
      const assigned = userRoleRows.filter((ur) => ur.userId === u.id);
      const workspaceRoles = assigned
        .filter((ur) => ur.organizationId === null)
        .map((ur) => roleById.get(ur.roleId) as string)
        .sort();
      const organizationRoles = assigned
        .filter((ur) => ur.organizationId !== null)
        .map((ur) => ({ role: roleById.get(ur.roleId) as string, organization: slugById.get(ur.organizationId as string) as string }))
        .sort(byKey((r) => `${r.organization}\u0000${r.role}`));
      return {
        email: u.email,
        ...(u.name === null ? {} : { name: u.name }),
        ...(u.passwordHash === null ? {} : { password_hash: u.passwordHash }),
        email_verified: u.emailVerified,
        status: u.status,
        roles: [...workspaceRoles, ...organizationRoles],
      };
    }),
  };
}
