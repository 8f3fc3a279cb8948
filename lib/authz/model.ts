/**
 * The authorization model as the console reads and changes it: APIs and their permissions, API
 * grants of clients, roles, users' roles (workspace level or per organization) and organization
 * members. Entities are named by their natural keys, as in the workspace file (client_id, API
 * audience, role name, organization slug), and users by id. Every change is written at once and
 * is seen by the very next permission check: nothing here is cached.
 */
import { and, asc, eq, inArray, isNull } from "drizzle-orm";
import type { Database } from "../../db/client";
import { apiGrants, apis, clients, organizationMembers, organizations, rolePermissions, roles, userRoles, users } from "../../db/schema";
import { recordAudit } from "../audit/events";
import type { Clock } from "../clock";
import { newId } from "../crypto";
import { isIdentityScope } from "../oauth/scopes";

export type AuthzModelErrorCode = "not_found" | "invalid_argument";

export class AuthzModelError extends Error {
  constructor(
    readonly code: AuthzModelErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "AuthzModelError";
  }
}

const notFound = (what: string) => new AuthzModelError("not_found", `${what} not found`);

export interface ApiInfo {
  id: string;
  audience: string;
  name: string;
  active: boolean;
  permissions: string[];
}

export interface ApiGrantInfo {
  clientId: string;
  clientName: string;
  clientType: "PUBLIC" | "WEB_CONFIDENTIAL" | "M2M";
  audience: string;
  apiName: string;
  apiActive: boolean;
  /** Interactive clients: what they may request for users. M2M clients: what they may obtain. */
  permissions: string[];
}

export interface RoleInfo {
  id: string;
  name: string;
  description: string | null;
  /** Per API, sorted by audience. */
  permissions: { audience: string; permissions: string[] }[];
}

export interface OrganizationRef {
  id: string;
  slug: string;
  name: string;
}

export interface UserRoleInfo {
  role: string;
  /** Null for a workspace-level role. */
  organization: OrganizationRef | null;
}

export interface OrganizationInfo extends OrganizationRef {
  active: boolean;
  members: { userId: string; email: string; name: string | null }[];
}

/** Who changes what, for the audit log. */
export interface Change {
  workspaceId: string;
  clock: Clock;
  /** Console operator user id; null for the CLI and tests. */
  actor?: string | null;
}

// ---------------------------------------------------------------------------------------------
// Reads

export async function listApis(db: Database, workspaceId: string): Promise<ApiInfo[]> {
  return db
    .select({ id: apis.id, audience: apis.audience, name: apis.name, active: apis.active, permissions: apis.permissions })
    .from(apis)
    .where(eq(apis.workspaceId, workspaceId))
    .orderBy(asc(apis.audience));
}

/** API grants of the workspace, optionally of one client or one API; sorted by client, then audience. */
export async function listApiGrants(db: Database, workspaceId: string, filter: { clientId?: string; audience?: string } = {}): Promise<ApiGrantInfo[]> {
  return db
    .select({
      clientId: clients.clientId,
      clientName: clients.name,
      clientType: clients.type,
      audience: apis.audience,
      apiName: apis.name,
      apiActive: apis.active,
      permissions: apiGrants.permissions,
    })
    .from(apiGrants)
    .innerJoin(clients, eq(clients.id, apiGrants.clientPk))
    .innerJoin(apis, eq(apis.id, apiGrants.apiId))
    .where(
      and(
        eq(apiGrants.workspaceId, workspaceId),
        filter.clientId === undefined ? undefined : eq(clients.clientId, filter.clientId),
        filter.audience === undefined ? undefined : eq(apis.audience, filter.audience),
      ),
    )
    .orderBy(asc(clients.clientId), asc(apis.audience));
}

export async function listRoles(db: Database, workspaceId: string): Promise<RoleInfo[]> {
  const [roleRows, permissionRows] = await Promise.all([
    db.select().from(roles).where(eq(roles.workspaceId, workspaceId)).orderBy(asc(roles.name)),
    db
      .select({ roleId: rolePermissions.roleId, audience: apis.audience, permissions: rolePermissions.permissions })
      .from(rolePermissions)
      .innerJoin(apis, eq(apis.id, rolePermissions.apiId))
      .where(eq(rolePermissions.workspaceId, workspaceId))
      .orderBy(asc(apis.audience)),
  ]);
  return roleRows.map((r) => ({
    id: r.id,
    name: r.name,
    description: r.description,
    permissions: permissionRows.filter((p) => p.roleId === r.id).map(({ audience, permissions }) => ({ audience, permissions })),
  }));
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

// ---------------------------------------------------------------------------------------------
// Lookups for changes

async function findApi(db: Database, workspaceId: string, audience: string) {
  const [row] = await db.select().from(apis).where(and(eq(apis.workspaceId, workspaceId), eq(apis.audience, audience))).limit(1);
  if (!row) throw notFound(`API ${JSON.stringify(audience)}`);
  return row;
}

async function findClientPk(db: Database, workspaceId: string, clientId: string): Promise<string> {
  const [row] = await db.select({ id: clients.id }).from(clients).where(and(eq(clients.workspaceId, workspaceId), eq(clients.clientId, clientId))).limit(1);
  if (!row) throw notFound(`Client ${JSON.stringify(clientId)}`);
  return row.id;
}

async function findRoleId(db: Database, workspaceId: string, name: string): Promise<string> {
  const [row] = await db.select({ id: roles.id }).from(roles).where(and(eq(roles.workspaceId, workspaceId), eq(roles.name, name))).limit(1);
  if (!row) throw notFound(`Role ${JSON.stringify(name)}`);
  return row.id;
}

async function findOrganizationId(db: Database, workspaceId: string, slug: string): Promise<string> {
  const [row] = await db
    .select({ id: organizations.id })
    .from(organizations)
    .where(and(eq(organizations.workspaceId, workspaceId), eq(organizations.slug, slug)))
    .limit(1);
  if (!row) throw notFound(`Organization ${JSON.stringify(slug)}`);
  return row.id;
}

async function requireUser(db: Database, workspaceId: string, userId: string): Promise<void> {
  const [row] = await db.select({ id: users.id }).from(users).where(and(eq(users.workspaceId, workspaceId), eq(users.id, userId))).limit(1);
  if (!row) throw notFound("User");
}

async function isMember(db: Database, workspaceId: string, organizationId: string, userId: string): Promise<boolean> {
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
function checkPermissions(api: { audience: string; permissions: string[] }, permissions: string[]): string[] {
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

async function audit(db: Database, change: Change, type: string, data: Record<string, unknown>): Promise<void> {
  await recordAudit(db, { workspaceId: change.workspaceId, type, actor: change.actor ?? null, data, at: change.clock.now() });
}

// ---------------------------------------------------------------------------------------------
// Changes

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

/**
 * Grants an API to a client with exactly these permissions (each defined on the API), creating
 * the grant or replacing its permissions. An empty list keeps the grant without permissions.
 */
export async function setApiGrant(db: Database, change: Change & { clientId: string; audience: string; permissions: string[] }): Promise<void> {
  const { workspaceId } = change;
  const clientPk = await findClientPk(db, workspaceId, change.clientId);
  const api = await findApi(db, workspaceId, change.audience);
  const permissions = checkPermissions(api, change.permissions);
  const now = change.clock.now();
  await db
    .insert(apiGrants)
    .values({ id: newId(), workspaceId, clientPk, apiId: api.id, permissions, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: [apiGrants.workspaceId, apiGrants.clientPk, apiGrants.apiId], set: { permissions, updatedAt: now } });
  await audit(db, change, "authz.api_grant.set", { client_id: change.clientId, audience: change.audience, permissions });
}

/** Withdraws a client's grant of an API. Returns whether one was removed. */
export async function removeApiGrant(db: Database, change: Change & { clientId: string; audience: string }): Promise<boolean> {
  const { workspaceId } = change;
  const clientPk = await findClientPk(db, workspaceId, change.clientId);
  const api = await findApi(db, workspaceId, change.audience);
  const removed = await db
    .delete(apiGrants)
    .where(and(eq(apiGrants.workspaceId, workspaceId), eq(apiGrants.clientPk, clientPk), eq(apiGrants.apiId, api.id)))
    .returning({ id: apiGrants.id });
  if (removed.length > 0) await audit(db, change, "authz.api_grant.removed", { client_id: change.clientId, audience: change.audience });
  return removed.length > 0;
}

/** Sets the permissions a role grants on one API; an empty list removes the API from the role. */
export async function setRolePermissions(db: Database, change: Change & { role: string; audience: string; permissions: string[] }): Promise<void> {
  const { workspaceId } = change;
  const roleId = await findRoleId(db, workspaceId, change.role);
  const api = await findApi(db, workspaceId, change.audience);
  const permissions = checkPermissions(api, change.permissions);
  if (permissions.length === 0) {
    await db.delete(rolePermissions).where(and(eq(rolePermissions.workspaceId, workspaceId), eq(rolePermissions.roleId, roleId), eq(rolePermissions.apiId, api.id)));
  } else {
    await db
      .insert(rolePermissions)
      .values({ id: newId(), workspaceId, roleId, apiId: api.id, permissions })
      .onConflictDoUpdate({ target: [rolePermissions.workspaceId, rolePermissions.roleId, rolePermissions.apiId], set: { permissions } });
  }
  await db.update(roles).set({ updatedAt: change.clock.now() }).where(eq(roles.id, roleId));
  await audit(db, change, "authz.role.permissions_set", { role: change.role, audience: change.audience, permissions });
}

/**
 * Replaces the permissions an API defines. A permission dropped from the API is dropped from every
 * grant and role of that API too (as the workspace import does), so nothing keeps a permission
 * that no longer exists.
 */
export async function setApiPermissions(db: Database, change: Change & { audience: string; permissions: string[] }): Promise<void> {
  const { workspaceId } = change;
  const seen = new Set<string>();
  for (const p of change.permissions) {
    if (typeof p !== "string" || !/^[A-Za-z0-9:._-]{1,64}$/.test(p) || isIdentityScope(p)) {
      throw new AuthzModelError("invalid_argument", `${JSON.stringify(p)} is not a valid permission name (1–64 of A–Z a–z 0–9 : . _ -, not an identity scope)`);
    }
    if (seen.has(p)) throw new AuthzModelError("invalid_argument", `Permission ${JSON.stringify(p)} is listed twice`);
    seen.add(p);
  }
  await db.transaction(async (tx) => {
    const api = await findApi(tx, workspaceId, change.audience);
    const now = change.clock.now();
    await tx.update(apis).set({ permissions: change.permissions, updatedAt: now }).where(eq(apis.id, api.id));
    const grantRows = await tx.select().from(apiGrants).where(and(eq(apiGrants.workspaceId, workspaceId), eq(apiGrants.apiId, api.id)));
    for (const row of grantRows) {
      const kept = row.permissions.filter((p) => seen.has(p));
      if (kept.length !== row.permissions.length) await tx.update(apiGrants).set({ permissions: kept, updatedAt: now }).where(eq(apiGrants.id, row.id));
    }
    const roleRows = await tx.select().from(rolePermissions).where(and(eq(rolePermissions.workspaceId, workspaceId), eq(rolePermissions.apiId, api.id)));
    for (const row of roleRows) {
      const kept = row.permissions.filter((p) => seen.has(p));
      if (kept.length !== row.permissions.length) await tx.update(rolePermissions).set({ permissions: kept }).where(eq(rolePermissions.id, row.id));
    }
    await audit(tx, change, "authz.api.permissions_set", { audience: change.audience, permissions: change.permissions });
  });
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
