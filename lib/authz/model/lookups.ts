// Lookups for changes: entities by natural key (not_found when missing) and the check of a permission list against an API.
import { and, eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { apis, clients, organizationMembers, organizations, roles, users } from "../../../db/schema";
import { isIdentityScope } from "../../oauth/scopes";
import { AuthzModelError, notFound } from "./errors";

export async function findApi(db: Database, workspaceId: string, audience: string) {
  const [row] = await db.select().from(apis).where(and(eq(apis.workspaceId, workspaceId), eq(apis.audience, audience))).limit(1);
  if (!row) throw notFound(`API ${JSON.stringify(audience)}`);
  return row;
}

export async function findClientPk(db: Database, workspaceId: string, clientId: string): Promise<string> {
  const [row] = await db.select({ id: clients.id }).from(clients).where(and(eq(clients.workspaceId, workspaceId), eq(clients.clientId, clientId))).limit(1);
  if (!row) throw notFound(`Client ${JSON.stringify(clientId)}`);
  return row.id;
}

export async function findRoleId(db: Database, workspaceId: string, name: string): Promise<string> {
  const [row] = await db.select({ id: roles.id }).from(roles).where(and(eq(roles.workspaceId, workspaceId), eq(roles.name, name))).limit(1);
  if (!row) throw notFound(`Role ${JSON.stringify(name)}`);
  return row.id;
}

export async function findOrganizationId(db: Database, workspaceId: string, slug: string): Promise<string> {
  const [row] = await db
    .select({ id: organizations.id })
    .from(organizations)
    .where(and(eq(organizations.workspaceId, workspaceId), eq(organizations.slug, slug)))
    .limit(1);
  if (!row) throw notFound(`Organization ${JSON.stringify(slug)}`);
  return row.id;
}

export async function requireUser(db: Database, workspaceId: string, userId: string): Promise<void> {
  const [row] = await db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, workspaceId), eq(users.id, userId))).limit(1);
  if (!row) throw notFound("User");
}

export async function isMember(db: Database, workspaceId: string, organizationId: string, userId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: organizationMembers.id })
    .from(organizationMembers)
    .where(
      and(eq(organizationMembers.workspaceId, workspaceId), eq(organizationMembers.organizationId, organizationId), eq(organizationMembers.userId, userId)),
    )
    .limit(1);
  return !!row;
}

/** A list of permissions that the API defines, each once. */
export function checkPermissions(api: { audience: string; permissions: string[] }, permissions: string[]): string[] {
  const defined = new Set(api.permissions);
  const seen = new Set<string>();
  for (const p of permissions) {
    if (typeof p !== "string" || isIdentityScope(p) || !defined.has(p)) {
      throw new AuthzModelError("invalid_argument", `Permission ${JSON.stringify(p)} is not defined on API ${JSON.stringify(api.audience)}`);
    }
    if (seen.has(p)) throw new AuthzModelError("invalid_argument", `Permission ${JSON.stringify(p)} is listed twice`);
    seen.add(p);
  }
  return permissions;
}
