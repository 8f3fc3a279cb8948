/**
 * Import and export of the declarative workspace file (docs/workspace-file.md).
 *
 * Import validates the whole document first (every problem, with JSON paths), then writes in one
 * transaction: all or nothing. It is idempotent: entities are matched by natural key (workspace
 * id; client_id; API audience; role name; lower-cased user email; organization slug), updated in
 * place only when they differ, and never duplicated. Import never deletes an entity the file
 * does not mention; the lists inside an entity (redirect URIs, an API's permissions, a role's
 * permissions, a grant's permissions, a user's roles, an organization's members, domains and
 * connections, an application's social providers) are replaced by what the file says. Import is
 * written one step per section of the file, in ./import/.
 */
import { listHostnames } from "../hostnames/hostnames";
import { eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import {
  apiGrants,
  apis,
  clientSocialProviders,
  clients,
  enterpriseConnections,
  organizationDomains,
  organizationMembers,
  organizations,
  socialProviders,
  rolePermissions,
  roles,
  userRoles,
  users,
  workspaces,
} from "../../db/schema";
import { readLogo } from "../branding/store";
import { policyEntry, type WorkspaceDocument } from "./document";
import { brandingEntry } from "./document/branding";
import { OPTIONAL_PROVIDER_FIELDS } from "./document/social-providers";
import { CONNECTION_PROTOCOLS } from "../federation/protocols";

export {
  validateWorkspaceDocument,
  workspaceDocumentSchema,
  WorkspaceFileError,
  type WorkspaceDocument,
  type WorkspaceDocumentInput,
  type WorkspaceFileIssue,
} from "./document";
export { importWorkspace, type GeneratedSecret, type ImportOptions, type ImportResult, type MembershipChange } from "./import";

const byKey =
  <T>(key: (v: T) => string) =>
  (a: T, b: T) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;

/**
 * The workspace as a document importWorkspace accepts. Passwords appear as `password_hash`;
 * client secrets never appear, nor do upstream secrets (connections' and social providers'
 * `client_secret` is left out: import then keeps the stored one), nor do enrolled factors (passkeys, authenticator apps, recovery
 * codes): they are secrets bound to this installation and are never exported or imported, nor is
 * any connection's own key (a connection exports its protocol's settings, lib/federation/protocols). Null when the
 * workspace does not exist or is the operator workspace. Lists are sorted by natural key so
 * exports are stable; social providers keep their button order.
 */
export async function exportWorkspace(db: Database, workspaceId: string): Promise<WorkspaceDocument | null> {
  const [workspace] = await db.select().from(workspaces).where(eq(workspaces.id, workspaceId));
  if (!workspace || workspace.system) return null;
  const wid = workspace.id;
  const [clientRows, apiRows, grantRows, roleRows, rolePermissionRows, orgRows, memberRows, userRows, userRoleRows, domainRows, connectionRows, providerRows, offeredRows] =
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
      db.select().from(organizationDomains).where(eq(organizationDomains.workspaceId, wid)),
      db.select().from(enterpriseConnections).where(eq(enterpriseConnections.workspaceId, wid)),
      db.select().from(socialProviders).where(eq(socialProviders.workspaceId, wid)),
      db.select().from(clientSocialProviders).where(eq(clientSocialProviders.workspaceId, wid)),
    ]);
  const orderedProviders = providerRows.sort((a, b) => a.position - b.position || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const providerOrder = new Map(orderedProviders.map((p, i) => [p.id, i]));
  const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  const clientById = new Map(clientRows.map((c) => [c.id, c.clientId]));
  const audienceById = new Map(apiRows.map((a) => [a.id, a.audience]));
  const roleById = new Map(roleRows.map((r) => [r.id, r.name]));
  const slugById = new Map(orgRows.map((o) => [o.id, o.slug]));
  const emailById = new Map(userRows.map((u) => [u.id, u.email]));

  // A policy appears only where it overrides something, as a file would say it.
  const policyField = (stored: unknown) => {
    const entry = policyEntry(stored);
    return entry ? { auth_policy: entry } : {};
  };
  const branding = brandingEntry(workspace.branding, workspace.name, await readLogo(db, wid));
  const hostnames = await listHostnames(db, wid);
  return {
    id: wid,
    name: workspace.name,
    ...policyField(workspace.authPolicy),
    ...(branding ? { branding } : {}),
    hostnames: hostnames.map((h) => ({ hostname: h.hostname, ...(h.verifiedAt ? { verified: true } : {}), ...(h.primary ? { primary: true } : {}) })),
    webauthn_related_origins: workspace.relatedOrigins,
    applications: clientRows.sort(byKey((c) => c.clientId)).map((c) => ({
      client_id: c.clientId,
      name: c.name,
      type: c.type,
      redirect_uris: c.redirectUris,
      post_logout_redirect_uris: c.postLogoutRedirectUris,
      ...(c.homeUri ? { home_uri: c.homeUri } : {}),
      allowed_origins: c.allowedOrigins,
      identity_scopes: c.identityScopes as WorkspaceDocument["applications"][number]["identity_scopes"],
      active: c.active,
      account_security: c.accountSecurity,
      ...policyField(c.authPolicy),
      ...(c.type === "PUBLIC" ? {} : { secret_lifetime_days: c.secretLifetimeDays }),
      // M2M clients have no sign-in page, so no providers to offer.
      ...(c.type === "M2M"
        ? {}
        : {
            social_providers: offeredRows
              .filter((o) => o.clientPk === c.id)
              .sort((a, b) => (providerOrder.get(a.providerId) ?? 0) - (providerOrder.get(b.providerId) ?? 0))
              .map((o) => orderedProviders[providerOrder.get(o.providerId) as number].key),
          }),
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
      domains: domainRows
        .filter((d) => d.organizationId === o.id)
        .sort(byKey((d) => d.domain))
        .map((d) => ({ domain: d.domain, ...(d.verifiedAt ? { verified: true } : {}) })),
      connections: connectionRows
        .filter((c) => c.organizationId === o.id)
        .sort(byKey((c) => c.name))
        .flatMap((c): WorkspaceDocument["organizations"][number]["connections"] => {
          const common = {
            default_roles: c.defaultRoleIds.flatMap((id) => roleById.get(id) ?? []).sort(),
            trust_upstream_mfa: c.trustUpstreamMfa,
            admission: c.admission,
            enabled: c.active,
          };
          // The protocol's own fields (lib/federation/protocols); a connection whose settings are incomplete is left out.
          const own = CONNECTION_PROTOCOLS[c.kind].file.export(c.config);
          return own ? [{ name: c.name, protocol: c.kind, ...own, ...common }] : [];
        }),
    })),
    social_providers: orderedProviders.map((p) => ({
      key: p.key,
      preset: p.preset,
      name: p.name,
      client_id: p.clientId,
      ...Object.fromEntries(OPTIONAL_PROVIDER_FIELDS.flatMap((f) => (str(p.config[f]) ? [[f, str(p.config[f])]] : []))),
      enabled: p.enabled,
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
