/**
 * An organization's directory in the console (run by lib/console's `runOperation`): turn SCIM
 * provisioning on or off and choose its rules (the connection its users sign in through, the
 * attribute that is the connection's subject, local sign-in, addresses outside the verified
 * domains, groups to roles), issue a token (shown once; the previous ones keep working for the
 * overlap asked) and revoke one. The page reads `directoryView`.
 */
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../../db/client";
import { enterpriseConnections, organizations, roles, type ScimGroupRoles } from "../../../db/schema";
import { checkbox, id, integer, optionalText } from "../../forms/fields";
import { issuerFor } from "../../http/context";
import type { Service } from "../../service";
import { defineOperation, fieldError, formError } from "../../surfaces/operation";
import { directoryOf, issueToken, listTokens, MAX_TOKEN_OVERLAP_HOURS, revokeToken, saveDirectory, ScimTokenError, type Directory, type TokenInfo } from "./directory";
import { scimBaseUrl } from "./endpoint";
import { recentRequests } from "./request-log";

async function organizationOf(db: Database, workspaceId: string, organizationId: string) {
  const [row] = await db
    .select({ id: organizations.id, slug: organizations.slug })
    .from(organizations)
    .where(and(eq(organizations.workspaceId, workspaceId), eq(organizations.id, organizationId)))
    .limit(1);
  if (!row) throw formError("This organization no longer exists");
  return row;
}

/**
 * The group mapping as the form writes it: one line per group, `Group name: role, role`, roles by
 * name. Returns the mapping with role ids, or the first line that does not read.
 */
export function readGroupRoles(text: string, known: { id: string; name: string }[]): ScimGroupRoles[] {
  const byName = new Map(known.map((r) => [r.name.toLowerCase(), r.id]));
  const out: ScimGroupRoles[] = [];
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === "") continue;
    const colon = line.lastIndexOf(":");
    if (colon < 1) throw fieldError("group_roles", `Line ${i + 1}: write the group's name, a colon, then its roles`);
    const group = line.slice(0, colon).trim();
    const names = line.slice(colon + 1).split(",").map((n) => n.trim()).filter(Boolean);
    if (names.length === 0) throw fieldError("group_roles", `Line ${i + 1}: name at least one role`);
    const roleIds = names.map((n) => {
      const roleId = byName.get(n.toLowerCase());
      if (!roleId) throw fieldError("group_roles", `Line ${i + 1}: no role named ${n}`);
      return roleId;
    });
    if (out.some((m) => m.group.toLowerCase() === group.toLowerCase())) throw fieldError("group_roles", `Line ${i + 1}: ${group} is mapped twice`);
    out.push({ group, roleIds: [...new Set(roleIds)] });
  }
  return out;
}

/** The mapping as the form shows it. */
export function writeGroupRoles(mapping: ScimGroupRoles[], known: { id: string; name: string }[]): string {
  const names = new Map(known.map((r) => [r.id, r.name]));
  return mapping.map((m) => `${m.group}: ${m.roleIds.map((r) => names.get(r) ?? r).join(", ")}`).join("\n");
}

export const saveDirectorySettings = defineOperation({
  name: "organization.directory_saved",
  role: "admin",
  input: z.object({
    organization_id: id("organization"),
    enabled: checkbox(),
    connection_id: optionalText(200),
    subject_attribute: z.enum(["externalId", "userName"], { error: "Choose the attribute that is the connection's subject" }),
    local_sign_in: checkbox(),
    any_domain: checkbox(),
    group_roles: optionalText(10_000),
  }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const org = await organizationOf(ctx.db, wid, input.organization_id);
    const connectionId = input.connection_id || null;
    if (connectionId) {
      const [connection] = await ctx.db
        .select({ id: enterpriseConnections.id })
        .from(enterpriseConnections)
        .where(and(eq(enterpriseConnections.workspaceId, wid), eq(enterpriseConnections.organizationId, org.id), eq(enterpriseConnections.id, connectionId)))
        .limit(1);
      if (!connection) throw fieldError("connection_id", "Choose one of this organization's connections");
    }
    const known = await ctx.db.select({ id: roles.id, name: roles.name }).from(roles).where(eq(roles.workspaceId, wid));
    const groupRoles = readGroupRoles(input.group_roles ?? "", known);
    const settings = { enabled: input.enabled, connectionId, subjectAttribute: input.subject_attribute, localSignIn: input.local_sign_in, anyDomain: input.any_domain, groupRoles };
    await saveDirectory(ctx.db, { workspaceId: wid, organizationId: org.id, settings, now: ctx.now });
    return {
      result: null,
      audit: {
        target: org.slug,
        data: {
          enabled: settings.enabled,
          connection_id: connectionId,
          subject_attribute: settings.subjectAttribute,
          local_sign_in: settings.localSignIn,
          any_domain: settings.anyDomain,
          group_roles: groupRoles.map((m) => ({ group: m.group, roles: m.roleIds.map((r) => known.find((k) => k.id === r)?.name ?? r) })),
        },
      },
    };
  },
});

async function requireDirectory(db: Database, workspaceId: string, organizationId: string): Promise<Directory> {
  const directory = await directoryOf(db, workspaceId, organizationId);
  if (!directory) throw formError("Turn provisioning on first");
  return directory;
}

export const issueScimToken = defineOperation({
  name: "organization.directory_token_issued",
  role: "admin",
  input: z.object({ organization_id: id("organization"), overlap_hours: integer("the overlap", 0, MAX_TOKEN_OVERLAP_HOURS) }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const org = await organizationOf(ctx.db, wid, input.organization_id);
    const directory = await requireDirectory(ctx.db, wid, org.id);
    try {
      const issued = await issueToken(ctx.db, { workspaceId: wid, directoryId: directory.id, overlapHours: input.overlap_hours, now: ctx.now });
      return { result: { token: issued.token, id: issued.id }, audit: { target: org.slug, data: { token_id: issued.id, overlap_hours: input.overlap_hours, previous: issued.previous } } };
    } catch (error) {
      if (error instanceof ScimTokenError) throw formError(error.message);
      throw error;
    }
  },
});

export const revokeScimToken = defineOperation({
  name: "organization.directory_token_revoked",
  role: "admin",
  input: z.object({ organization_id: id("organization"), token_id: id("token") }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const org = await organizationOf(ctx.db, wid, input.organization_id);
    const directory = await requireDirectory(ctx.db, wid, org.id);
    const revoked = await revokeToken(ctx.db, { workspaceId: wid, directoryId: directory.id, tokenId: input.token_id, now: ctx.now });
    if (!revoked) throw formError("This token no longer works");
    return { result: null, audit: { target: org.slug, data: { token_id: input.token_id } } };
  },
});

export interface DirectoryView {
  baseUrl: string;
  directory: Directory | null;
  tokens: TokenInfo[];
  requests: Awaited<ReturnType<typeof recentRequests>>;
  connections: { id: string; name: string }[];
  groupRolesText: string;
}

/** What the organization's page shows of its directory. */
export async function directoryView(service: Service, workspaceId: string, organization: { id: string; slug: string }): Promise<DirectoryView> {
  const db = service.db;
  const now = service.clock.now();
  const [directory, connections, known] = await Promise.all([
    directoryOf(db, workspaceId, organization.id),
    db
      .select({ id: enterpriseConnections.id, name: enterpriseConnections.name })
      .from(enterpriseConnections)
      .where(and(eq(enterpriseConnections.workspaceId, workspaceId), eq(enterpriseConnections.organizationId, organization.id))),
    db.select({ id: roles.id, name: roles.name }).from(roles).where(eq(roles.workspaceId, workspaceId)),
  ]);
  const [tokens, requests] = directory ? await Promise.all([listTokens(db, workspaceId, directory.id, now), recentRequests(db, workspaceId, directory.id)]) : [[], []];
  return {
    baseUrl: scimBaseUrl(issuerFor(service.config.publicUrl, workspaceId), organization.slug),
    directory,
    tokens,
    requests,
    connections,
    groupRolesText: directory ? writeGroupRoles(directory.groupRoles, known) : "",
  };
}
