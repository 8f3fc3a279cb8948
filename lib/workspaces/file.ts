/**
 * Import and export of the declarative workspace file (docs/workspace-file.md).
 *
 * Import validates the whole document first (every problem, with JSON paths), then writes in one
 * transaction: all or nothing. It is idempotent: entities are matched by natural key (workspace
 * id; client_id; API audience; role name; lower-cased user email; organization slug), updated in
 * place only when they differ, and never duplicated. Import never deletes an entity the file
 * does not mention; the lists inside an entity (redirect URIs, an API's permissions, a role's
 * permissions, a grant's permissions, a user's roles, an organization's members) are replaced
 * by what the file says.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import {
  apiGrants,
  apis,
  auditEvents,
  clients,
  organizationMembers,
  organizations,
  rolePermissions,
  roles,
  userRoles,
  users,
  workspaces,
} from "../../db/schema";
import { hashPassword, verifyPassword } from "../authn/password";
import { createClientSecret, DEFAULT_SECRET_LIFETIME_DAYS, ensurePresetClientSecret, revokeAllClientSecrets } from "../clients/secrets";
import type { Clock } from "../clock";
import { newId } from "../crypto";
import {
  defaultIdentityScopes,
  normalizeEmail,
  validateWorkspaceDocument,
  WorkspaceFileError,
  type UserRoleRef,
  type WorkspaceDocument,
} from "./document";

export {
  validateWorkspaceDocument,
  workspaceDocumentSchema,
  WorkspaceFileError,
  type WorkspaceDocument,
  type WorkspaceDocumentInput,
  type WorkspaceFileIssue,
} from "./document";

export interface ImportOptions {
  clock: Clock;
  /** The service master key; reserved for encrypted fields (nothing in the file needs it yet). */
  masterKey: Buffer;
  /**
   * Generate a secret for each WEB_CONFIDENTIAL or M2M client that this import creates (or turns
   * from PUBLIC into a confidential type) without a preset `secret`. The secrets are returned
   * once in `generatedSecrets`; only their hashes are stored.
   */
  generateSecrets?: boolean;
  /** Who imported, for the audit log (console operator user id); null for the CLI. */
  actor?: string | null;
}

export interface GeneratedSecret {
  clientId: string;
  secretId: string;
  secret: string;
  expiresAt: Date;
}

export interface ImportResult {
  workspaceId: string;
  /** The workspace did not exist before. */
  created: boolean;
  /** Rows inserted, updated or deleted; 0 when the database already matched the file. */
  changes: number;
  generatedSecrets?: GeneratedSecret[];
}

const CHUNK = 1000;

function chunks<T>(values: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += CHUNK) out.push(values.slice(i, i + CHUNK));
  return out;
}

/** True when any field of `desired` differs from `existing` (arrays compared in order). */
function differs(existing: Record<string, unknown>, desired: Record<string, unknown>): boolean {
  return Object.entries(desired).some(([key, value]) => {
    const current = existing[key];
    if (Array.isArray(value) || Array.isArray(current)) return JSON.stringify(current) !== JSON.stringify(value);
    return current !== value;
  });
}

/**
 * Password hashes to store, keyed by normalized email; computed before the transaction because
 * argon2 is slow. A plaintext password that the stored hash already verifies keeps that hash, so
 * re-importing a file is stable and does not invalidate anything.
 */
async function resolvePasswordHashes(db: Database, file: WorkspaceDocument): Promise<Map<string, string>> {
  const wanted = file.users.filter((u) => u.password !== undefined || u.password_hash !== undefined);
  const stored = new Map<string, string | null>();
  const plain = wanted.filter((u) => u.password !== undefined).map((u) => normalizeEmail(u.email));
  for (const part of chunks(plain)) {
    const rows = await db
      .select({ emailNormalized: users.emailNormalized, passwordHash: users.passwordHash })
      .from(users)
      .where(and(eq(users.workspaceId, file.id), inArray(users.emailNormalized, part)));
    for (const row of rows) stored.set(row.emailNormalized, row.passwordHash);
  }
  const out = new Map<string, string>();
  await Promise.all(
    wanted.map(async (user) => {
      const key = normalizeEmail(user.email);
      if (user.password_hash !== undefined) {
        out.set(key, user.password_hash);
        return;
      }
      const password = user.password as string;
      const current = stored.get(key);
      out.set(key, current && (await verifyPassword(current, password)) ? current : await hashPassword(password));
    }),
  );
  return out;
}

/**
 * Validates `doc` and writes it. Throws WorkspaceFileError (nothing written) when the document is
 * invalid or names the operator workspace.
 */
export async function importWorkspace(db: Database, doc: unknown, opts: ImportOptions): Promise<ImportResult> {
  const file = validateWorkspaceDocument(doc);
  const passwordHashes = await resolvePasswordHashes(db, file);
  const { clock } = opts;
  const generated: GeneratedSecret[] = [];

  return db.transaction(async (tx) => {
    const now = clock.now();
    const wid = file.id;
    let changes = 0;
    // Concurrent imports of one workspace run one after the other, so neither duplicates rows.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`latchkey:workspace-import:${wid}`}))`);

    // Workspace
    const [workspace] = await tx.select().from(workspaces).where(eq(workspaces.id, wid));
    if (workspace?.system) {
      throw new WorkspaceFileError([{ path: "$.id", message: "names the operator workspace, which cannot be imported" }]);
    }
    if (!workspace) {
      await tx.insert(workspaces).values({ id: wid, name: file.name, system: false, createdAt: now, updatedAt: now });
      changes++;
    } else if (workspace.name !== file.name) {
      await tx.update(workspaces).set({ name: file.name, updatedAt: now }).where(eq(workspaces.id, wid));
      changes++;
    }

    // Applications and their preset secrets
    const clientPk = new Map<string, string>();
    const existingClients = new Map(
      (await tx.select().from(clients).where(eq(clients.workspaceId, wid))).map((c) => [c.clientId, c]),
    );
    for (const app of file.applications) {
      const desired = {
        name: app.name,
        type: app.type,
        active: app.active,
        redirectUris: app.redirect_uris,
        postLogoutRedirectUris: app.post_logout_redirect_uris,
        allowedOrigins: app.allowed_origins,
        identityScopes: app.identity_scopes ?? defaultIdentityScopes(app.type),
        accountSecurity: app.account_security,
        ...(app.type === "PUBLIC" ? {} : { secretLifetimeDays: app.secret_lifetime_days ?? DEFAULT_SECRET_LIFETIME_DAYS }),
      };
      const existing = existingClients.get(app.client_id);
      let pk: string;
      let becameConfidential = false;
      if (!existing) {
        pk = newId();
        await tx.insert(clients).values({ id: pk, workspaceId: wid, clientId: app.client_id, ...desired, createdAt: now, updatedAt: now });
        changes++;
        becameConfidential = app.type !== "PUBLIC";
      } else {
        pk = existing.id;
        if (differs(existing, desired)) {
          await tx.update(clients).set({ ...desired, updatedAt: now }).where(eq(clients.id, pk));
          changes++;
        }
        if (existing.type !== "PUBLIC" && app.type === "PUBLIC") {
          // A public client has no credentials: none may stay usable.
          changes += (await revokeAllClientSecrets(tx, { clientPk: pk, clock })).length;
        }
        becameConfidential = existing.type === "PUBLIC" && app.type !== "PUBLIC";
      }
      clientPk.set(app.client_id, pk);
      if (app.secret !== undefined) {
        const preset = await ensurePresetClientSecret(tx, {
          clientPk: pk,
          secret: app.secret,
          lifetimeDays: desired.secretLifetimeDays ?? DEFAULT_SECRET_LIFETIME_DAYS,
          clock,
        });
        if (preset.created) changes += 1 + preset.revoked.length;
      } else if (becameConfidential && opts.generateSecrets) {
        const secret = await createClientSecret(tx, { workspaceId: wid, clientId: app.client_id, clock, actor: opts.actor });
        generated.push({ clientId: app.client_id, secretId: secret.id, secret: secret.secret, expiresAt: secret.expiresAt });
        changes++;
      }
    }

    // APIs. Dropping a permission from an API also drops it from every grant and role of that API,
    // including ones the file does not mention, so nothing keeps a permission that no longer exists.
    const apiPk = new Map<string, string>();
    const existingApis = new Map((await tx.select().from(apis).where(eq(apis.workspaceId, wid))).map((a) => [a.audience, a]));
    for (const api of file.apis) {
      const desired = { name: api.name, active: api.active, permissions: api.permissions };
      const existing = existingApis.get(api.audience);
      if (!existing) {
        const id = newId();
        await tx.insert(apis).values({ id, workspaceId: wid, audience: api.audience, ...desired, createdAt: now, updatedAt: now });
        apiPk.set(api.audience, id);
        changes++;
        continue;
      }
      apiPk.set(api.audience, existing.id);
      if (!differs(existing, desired)) continue;
      await tx.update(apis).set({ ...desired, updatedAt: now }).where(eq(apis.id, existing.id));
      changes++;
      const kept = new Set(api.permissions);
      if (existing.permissions.every((p) => kept.has(p))) continue;
      const grantRows = await tx.select().from(apiGrants).where(and(eq(apiGrants.workspaceId, wid), eq(apiGrants.apiId, existing.id)));
      for (const row of grantRows) {
        const permissions = row.permissions.filter((p) => kept.has(p));
        if (permissions.length === row.permissions.length) continue;
        await tx.update(apiGrants).set({ permissions, updatedAt: now }).where(eq(apiGrants.id, row.id));
        changes++;
      }
      const roleRows = await tx
        .select()
        .from(rolePermissions)
        .where(and(eq(rolePermissions.workspaceId, wid), eq(rolePermissions.apiId, existing.id)));
      for (const row of roleRows) {
        const permissions = row.permissions.filter((p) => kept.has(p));
        if (permissions.length === row.permissions.length) continue;
        await tx.update(rolePermissions).set({ permissions }).where(eq(rolePermissions.id, row.id));
        changes++;
      }
    }

    // API grants
    const existingGrants = new Map(
      (await tx.select().from(apiGrants).where(eq(apiGrants.workspaceId, wid))).map((g) => [`${g.clientPk} ${g.apiId}`, g]),
    );
    for (const grant of file.api_grants) {
      const cpk = clientPk.get(grant.client_id) as string;
      const apk = apiPk.get(grant.audience) as string;
      const existing = existingGrants.get(`${cpk} ${apk}`);
      if (!existing) {
        await tx.insert(apiGrants).values({
          id: newId(),
          workspaceId: wid,
          clientPk: cpk,
          apiId: apk,
          permissions: grant.permissions,
          createdAt: now,
          updatedAt: now,
        });
        changes++;
      } else if (differs(existing, { permissions: grant.permissions })) {
        await tx.update(apiGrants).set({ permissions: grant.permissions, updatedAt: now }).where(eq(apiGrants.id, existing.id));
        changes++;
      }
    }

    // Roles and their permissions (one row per role and API)
    const rolePk = new Map<string, string>();
    const existingRoles = new Map((await tx.select().from(roles).where(eq(roles.workspaceId, wid))).map((r) => [r.name, r]));
    const existingRolePermissions = await tx.select().from(rolePermissions).where(eq(rolePermissions.workspaceId, wid));
    for (const role of file.roles) {
      const desired = { description: role.description ?? null };
      const existing = existingRoles.get(role.name);
      let id: string;
      if (!existing) {
        id = newId();
        await tx.insert(roles).values({ id, workspaceId: wid, name: role.name, ...desired, createdAt: now, updatedAt: now });
        changes++;
      } else {
        id = existing.id;
        if (differs(existing, desired)) {
          await tx.update(roles).set({ ...desired, updatedAt: now }).where(eq(roles.id, id));
          changes++;
        }
      }
      rolePk.set(role.name, id);
      const wanted = new Map(role.permissions.map((p) => [apiPk.get(p.audience) as string, p.permissions]));
      const current = existingRolePermissions.filter((rp) => rp.roleId === id);
      for (const row of current) {
        const permissions = wanted.get(row.apiId);
        if (permissions === undefined) {
          await tx.delete(rolePermissions).where(eq(rolePermissions.id, row.id));
          changes++;
        } else if (differs(row, { permissions })) {
          await tx.update(rolePermissions).set({ permissions }).where(eq(rolePermissions.id, row.id));
          changes++;
        }
      }
      for (const [apiId, permissions] of wanted) {
        if (current.some((row) => row.apiId === apiId)) continue;
        await tx.insert(rolePermissions).values({ id: newId(), workspaceId: wid, roleId: id, apiId, permissions });
        changes++;
      }
    }

    // Organizations
    const orgPk = new Map<string, string>();
    const existingOrgs = new Map(
      (await tx.select().from(organizations).where(eq(organizations.workspaceId, wid))).map((o) => [o.slug, o]),
    );
    for (const org of file.organizations) {
      const desired = { name: org.name, active: org.active };
      const existing = existingOrgs.get(org.slug);
      if (!existing) {
        const id = newId();
        await tx.insert(organizations).values({ id, workspaceId: wid, slug: org.slug, ...desired, createdAt: now, updatedAt: now });
        orgPk.set(org.slug, id);
        changes++;
      } else {
        orgPk.set(org.slug, existing.id);
        if (differs(existing, desired)) {
          await tx.update(organizations).set({ ...desired, updatedAt: now }).where(eq(organizations.id, existing.id));
          changes++;
        }
      }
    }

    // Users
    const userPk = new Map<string, string>();
    const existingUsers = new Map<string, typeof users.$inferSelect>();
    for (const part of chunks(file.users.map((u) => normalizeEmail(u.email)))) {
      const rows = await tx.select().from(users).where(and(eq(users.workspaceId, wid), inArray(users.emailNormalized, part)));
      for (const row of rows) existingUsers.set(row.emailNormalized, row);
    }
    for (const user of file.users) {
      const key = normalizeEmail(user.email);
      const passwordHash = passwordHashes.get(key);
      const desired = {
        email: user.email.trim(),
        name: user.name?.trim() || null,
        emailVerified: user.email_verified,
        status: user.status,
        // No password in the file leaves any existing password as it is.
        ...(passwordHash === undefined ? {} : { passwordHash }),
      };
      const existing = existingUsers.get(key);
      if (!existing) {
        const id = newId();
        await tx.insert(users).values({ id, workspaceId: wid, emailNormalized: key, ...desired, createdAt: now, updatedAt: now });
        userPk.set(key, id);
        changes++;
      } else {
        userPk.set(key, existing.id);
        if (differs(existing, desired)) {
          await tx.update(users).set({ ...desired, updatedAt: now }).where(eq(users.id, existing.id));
          changes++;
        }
      }
    }

    // Organization members. Leaving an organization also ends the roles held in it.
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
        changes++;
      }
      for (const userId of wanted) {
        if (current.some((m) => m.userId === userId)) continue;
        await tx.insert(organizationMembers).values({ id: newId(), workspaceId: wid, organizationId: orgId, userId, createdAt: now });
        changes++;
      }
    }

    // User roles
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
        changes++;
      }
      for (const [key, { roleId, organizationId }] of wanted) {
        if (current.some((row) => roleKey(row.roleId, row.organizationId) === key)) continue;
        await tx.insert(userRoles).values({ id: newId(), workspaceId: wid, userId, roleId, organizationId, createdAt: now });
        changes++;
      }
    }

    if (changes > 0) {
      await tx.insert(auditEvents).values({
        id: newId(),
        workspaceId: wid,
        type: "workspace.imported",
        actor: opts.actor ?? null,
        data: { created: !workspace, changes },
        createdAt: now,
      });
    }

    return {
      workspaceId: wid,
      created: !workspace,
      changes,
      ...(generated.length > 0 ? { generatedSecrets: generated } : {}),
    };
  });
}

const byKey =
  <T>(key: (v: T) => string) =>
  (a: T, b: T) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;

/**
 * The workspace as a document importWorkspace accepts. Passwords appear as `password_hash`;
 * client secrets never appear. Null when the workspace does not exist or is the operator
 * workspace. Lists are sorted by natural key so exports are stable.
 */
export async function exportWorkspace(db: Database, workspaceId: string): Promise<WorkspaceDocument | null> {
  const [workspace] = await db.select().from(workspaces).where(eq(workspaces.id, workspaceId));
  if (!workspace || workspace.system) return null;
  const wid = workspace.id;
  const [clientRows, apiRows, grantRows, roleRows, rolePermissionRows, orgRows, memberRows, userRows, userRoleRows] =
    await Promise.all([
      db.select().from(clients).where(eq(clients.workspaceId, wid)),
      db.select().from(apis).where(eq(apis.workspaceId, wid)),
      db.select().from(apiGrants).where(eq(apiGrants.workspaceId, wid)),
      db.select().from(roles).where(eq(roles.workspaceId, wid)),
      db.select().from(rolePermissions).where(eq(rolePermissions.workspaceId, wid)),
      db.select().from(organizations).where(eq(organizations.workspaceId, wid)),
      db.select().from(organizationMembers).where(eq(organizationMembers.workspaceId, wid)),
      db.select().from(users).where(eq(users.workspaceId, wid)),
      db.select().from(userRoles).where(eq(userRoles.workspaceId, wid)),
    ]);
  const clientById = new Map(clientRows.map((c) => [c.id, c.clientId]));
  const audienceById = new Map(apiRows.map((a) => [a.id, a.audience]));
  const roleById = new Map(roleRows.map((r) => [r.id, r.name]));
  const slugById = new Map(orgRows.map((o) => [o.id, o.slug]));
  const emailById = new Map(userRows.map((u) => [u.id, u.email]));

  return {
    id: wid,
    name: workspace.name,
    applications: clientRows.sort(byKey((c) => c.clientId)).map((c) => ({
      client_id: c.clientId,
      name: c.name,
      type: c.type,
      redirect_uris: c.redirectUris,
      post_logout_redirect_uris: c.postLogoutRedirectUris,
      allowed_origins: c.allowedOrigins,
      identity_scopes: c.identityScopes as WorkspaceDocument["applications"][number]["identity_scopes"],
      active: c.active,
      account_security: c.accountSecurity,
      ...(c.type === "PUBLIC" ? {} : { secret_lifetime_days: c.secretLifetimeDays }),
    })),
    apis: apiRows.sort(byKey((a) => a.audience)).map((a) => ({
      audience: a.audience,
      name: a.name,
      active: a.active,
      permissions: a.permissions,
    })),
    api_grants: grantRows
      .map((g) => ({ client_id: clientById.get(g.clientPk) as string, audience: audienceById.get(g.apiId) as string, permissions: g.permissions }))
      .sort(byKey((g) => `${g.client_id}\u0000${g.audience}`)),
    roles: roleRows.sort(byKey((r) => r.name)).map((r) => ({
      name: r.name,
      ...(r.description === null ? {} : { description: r.description }),
      permissions: rolePermissionRows
        .filter((rp) => rp.roleId === r.id)
        .map((rp) => ({ audience: audienceById.get(rp.apiId) as string, permissions: rp.permissions }))
        .sort(byKey((p) => p.audience)),
    })),
    organizations: orgRows.sort(byKey((o) => o.slug)).map((o) => ({
      slug: o.slug,
      name: o.name,
      active: o.active,
      members: memberRows
        .filter((m) => m.organizationId === o.id)
        .map((m) => emailById.get(m.userId) as string)
        .sort(),
    })),
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
