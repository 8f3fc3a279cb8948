/**
 * The workspace file's `scim_directories` (docs/workspace-file.md): each organization's directory
 * settings (never its tokens, which are issued in the console and shown once): on or off, the
 * connection its users sign in through (by name), the attribute that is the connection's subject,
 * local sign-in, addresses outside the verified domains, and its groups' roles (by name). An
 * import changes the directories it names and leaves the others as they are.
 */
import { and, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { enterpriseConnections, organizations, roles, scimDirectories } from "../../../db/schema";
import { asArray, asString, defineWorkspaceSection, entries, WorkspaceFileError } from "../../surfaces/workspace-file";
import { differs } from "../../surfaces/workspace-file/context";
import { newId } from "../../crypto";
import { DEFAULT_SETTINGS } from "./directory";

const groupRolesSchema = z.strictObject({
  group: z.string().trim().min(1, "must not be empty").max(256, "must be at most 256 characters"),
  roles: z.array(z.string()).min(1, "must name at least one role"),
});

const directorySchema = z.strictObject({
  organization: z.string(),
  enabled: z.boolean().default(true),
  /** The name of one of the organization's connections; null: none (users are provisioned without an identity to sign in through). */
  connection: z.string().nullable().default(null),
  subject_attribute: z.enum(["externalId", "userName"], { error: 'must be "externalId" or "userName"' }).default("externalId"),
  local_sign_in: z.boolean().default(false),
  any_domain: z.boolean().default(false),
  group_roles: z.array(groupRolesSchema).max(500, "must have at most 500 groups").default([]),
});

export const SCIM_SECTION = defineWorkspaceSection({
  name: "scim_directories",
  shape: { scim_directories: z.array(directorySchema).default([]) },
  after: "organizations",
  check(c) {
    const orgs = c.index("organizations", "slug");
    const roleNames = c.index("roles", "name");
    const seen = new Map<string, number>();
    for (const [i, entry] of entries(c.doc, "scim_directories")) {
      const slug = asString(entry.organization);
      if (slug === undefined) continue;
      const org = orgs.get(slug);
      if (!org) c.add(["scim_directories", i, "organization"], `unknown organization ${JSON.stringify(slug)} (not in organizations)`);
      if (seen.has(slug)) c.add(["scim_directories", i, "organization"], `duplicate directory of ${JSON.stringify(slug)} (also at index ${seen.get(slug)})`);
      else seen.set(slug, i);
      const connection = asString(entry.connection);
      if (org && connection !== undefined && !asArray(org.connections).some((k) => asString((k as Record<string, unknown>)?.name) === connection)) {
        c.add(["scim_directories", i, "connection"], `unknown connection ${JSON.stringify(connection)} (not in the organization's connections)`);
      }
      const groups = new Set<string>();
      for (const [k, mapping] of entries(entry, "group_roles")) {
        const group = asString(mapping.group)?.trim().toLowerCase();
        if (group !== undefined && groups.has(group)) c.add(["scim_directories", i, "group_roles", k, "group"], `duplicate group ${JSON.stringify(mapping.group)}`);
        if (group !== undefined) groups.add(group);
        asArray(mapping.roles).forEach((role, r) => {
          if (typeof role === "string" && !roleNames.has(role)) c.add(["scim_directories", i, "group_roles", k, "roles", r], `unknown role ${JSON.stringify(role)} (not in roles)`);
        });
      }
    }
  },
  async import(ctx) {
    for (const entry of ctx.file.scim_directories) {
      const organizationId = ctx.ids.orgPk.get(entry.organization);
      if (!organizationId) throw new WorkspaceFileError([{ path: "$.scim_directories", message: `unknown organization ${entry.organization}` }]);
      let connectionId: string | null = null;
      if (entry.connection !== null) {
        const [row] = await ctx.tx
          .select({ id: enterpriseConnections.id })
          .from(enterpriseConnections)
          .where(and(eq(enterpriseConnections.workspaceId, ctx.wid), eq(enterpriseConnections.organizationId, organizationId), eq(enterpriseConnections.name, entry.connection)));
        connectionId = row?.id ?? null;
      }
      const groupRoles = entry.group_roles.map((m) => ({ group: m.group, roleIds: [...new Set(m.roles.map((r) => ctx.ids.rolePk.get(r)!))] }));
      const settings = { enabled: entry.enabled, connectionId, subjectAttribute: entry.subject_attribute, localSignIn: entry.local_sign_in, anyDomain: entry.any_domain, groupRoles };
      const [existing] = await ctx.tx
        .select()
        .from(scimDirectories)
        .where(and(eq(scimDirectories.workspaceId, ctx.wid), eq(scimDirectories.organizationId, organizationId)));
      if (existing && !differs(existing as unknown as Record<string, unknown>, settings)) continue;
      if (existing) await ctx.tx.update(scimDirectories).set({ ...settings, updatedAt: ctx.now }).where(eq(scimDirectories.id, existing.id));
      else await ctx.tx.insert(scimDirectories).values({ id: newId(), workspaceId: ctx.wid, organizationId, ...DEFAULT_SETTINGS, ...settings, createdAt: ctx.now, updatedAt: ctx.now });
      ctx.changes++;
    }
  },
  async export(db, workspaceId) {
    const rows = await db
      .select({ directory: scimDirectories, slug: organizations.slug })
      .from(scimDirectories)
      .innerJoin(organizations, eq(organizations.id, scimDirectories.organizationId))
      .where(eq(scimDirectories.workspaceId, workspaceId))
      .orderBy(organizations.slug);
    const connectionIds = rows.flatMap((r) => (r.directory.connectionId ? [r.directory.connectionId] : []));
    const roleIds = [...new Set(rows.flatMap((r) => r.directory.groupRoles.flatMap((m) => m.roleIds)))];
    const [connections, roleRows] = await Promise.all([
      connectionIds.length ? db.select({ id: enterpriseConnections.id, name: enterpriseConnections.name }).from(enterpriseConnections).where(inArray(enterpriseConnections.id, connectionIds)) : [],
      roleIds.length ? db.select({ id: roles.id, name: roles.name }).from(roles).where(inArray(roles.id, roleIds)) : [],
    ]);
    const connectionName = new Map(connections.map((c) => [c.id, c.name]));
    const roleName = new Map(roleRows.map((r) => [r.id, r.name]));
    return {
      scim_directories: rows.map(({ directory: d, slug }) => ({
        organization: slug,
        enabled: d.enabled,
        connection: d.connectionId ? (connectionName.get(d.connectionId) ?? null) : null,
        subject_attribute: d.subjectAttribute,
        local_sign_in: d.localSignIn,
        any_domain: d.anyDomain,
        group_roles: d.groupRoles
          .map((m) => ({ group: m.group, roles: m.roleIds.flatMap((r) => (roleName.has(r) ? [roleName.get(r)!] : [])) }))
          .filter((m) => m.roles.length > 0),
      })),
    };
  },
});
