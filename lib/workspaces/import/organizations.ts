// The `organizations` section: organizations by slug, their email domains and their enterprise connections (members are a later step, after users).
import { and, eq } from "drizzle-orm";
import { enterpriseConnections, organizationDomains, organizations } from "../../../db/schema";
import { recordAudit } from "../../audit/events";
import { newId, randomToken } from "../../crypto";
import { normalizeDomain } from "../../federation/domains";
import { WorkspaceFileError, type WorkspaceFileIssue } from "../document";
import type { OrganizationEntry } from "../document/schema";
import { jsonPath } from "../../surfaces/workspace-file/paths";
import { differs, type ImportContext } from "./context";
import { sealedIfChanged } from "./social-providers";
import { CONNECTION_PROTOCOLS, type ConnectionKind } from "../../federation/protocols";

export async function importOrganizations(ctx: ImportContext): Promise<void> {
  const { tx, file, now, wid } = ctx;
  const { orgPk } = ctx.ids;
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
      ctx.changes++;
    } else {
      orgPk.set(org.slug, existing.id);
      if (differs(existing, desired)) {
        await tx.update(organizations).set({ ...desired, updatedAt: now }).where(eq(organizations.id, existing.id));
        ctx.changes++;
      }
    }
  }
  const slugById = new Map([...existingOrgs.values()].map((o) => [o.id, o.slug]));
  const issues: WorkspaceFileIssue[] = [];
  for (const [i, org] of file.organizations.entries()) {
    await importDomains(ctx, i, org, slugById, issues);
    await importConnections(ctx, i, org, issues);
  }
  if (issues.length) throw new WorkspaceFileError(issues);
}

/**
 * Domains are added and, with `verified: true`, marked verified by an operator (audited like the
 * console's mark). Import never removes a domain nor unverifies one: a claim the file leaves out
 * stays, whatever verified it.
 */
async function importDomains(ctx: ImportContext, i: number, org: OrganizationEntry, slugById: Map<string, string>, issues: WorkspaceFileIssue[]): Promise<void> {
  const { tx, now, wid, opts } = ctx;
  const orgId = ctx.ids.orgPk.get(org.slug) as string;
  for (const [k, entry] of org.domains.entries()) {
    const domain = normalizeDomain(entry.domain);
    const [row] = await tx
      .select()
      .from(organizationDomains)
      .where(and(eq(organizationDomains.workspaceId, wid), eq(organizationDomains.domain, domain)))
      .limit(1);
    if (row && row.organizationId !== orgId) {
      issues.push({
        path: jsonPath(["organizations", i, "domains", k, "domain"]),
        message: `${domain} is claimed by organization ${slugById.get(row.organizationId) ?? "(another)"}: remove it there first (import never moves a domain)`,
      });
      continue;
    }
    let id = row?.id;
    if (!row) {
      id = newId();
      await tx.insert(organizationDomains).values({ id, workspaceId: wid, organizationId: orgId, domain, verificationToken: randomToken(24), createdAt: now });
      ctx.changes++;
    }
    if (entry.verified === true && !row?.verifiedAt) {
      await tx.update(organizationDomains).set({ verifiedAt: now, verificationMethod: "operator" }).where(eq(organizationDomains.id, id as string));
      await recordAudit(tx, {
        workspaceId: wid,
        type: "workspace.domain_verified",
        actor: opts.actor ?? null,
        subject: org.slug,
        data: { domain, domain_id: id, method: "operator", source: "workspace import" },
        at: now,
      });
      ctx.changes++;
    }
  }
}

/**
 * Connections by name within the organization; those the file leaves out stay as they are. The
 * protocol's part (lib/federation/protocols) makes the settings and the sealed secret (OIDC's
 * `client_secret` when given; none keeps the stored one). A connection keeps its protocol: a name
 * that is another protocol's connection is refused.
 */
async function importConnections(ctx: ImportContext, i: number, org: OrganizationEntry, issues: WorkspaceFileIssue[]): Promise<void> {
  const { tx, wid } = ctx;
  const orgId = ctx.ids.orgPk.get(org.slug) as string;
  const existing = await tx
    .select()
    .from(enterpriseConnections)
    .where(and(eq(enterpriseConnections.workspaceId, wid), eq(enterpriseConnections.organizationId, orgId)));
  for (const [k, connection] of org.connections.entries()) {
    const name = connection.name.trim();
    const row = existing.find((c) => c.name === name);
    const kind = connection.protocol as ConnectionKind;
    if (row && row.kind !== kind) {
      issues.push({ path: jsonPath(["organizations", i, "connections", k, "name"]), message: `names a ${row.kind.toUpperCase()} connection of organization ${org.slug}: give the ${kind.toUpperCase()} connection another name` });
      continue;
    }
    await importConnection(ctx, { index: [i, k], org, orgId, name, kind, connection, row: row ?? null }, issues);
  }
}

type ConnectionEntry = OrganizationEntry["connections"][number];
type ConnectionRow = typeof enterpriseConnections.$inferSelect;

/** One connection entry: its protocol's settings, then the row inserted or updated when it differs, and the audit events. */
async function importConnection(
  ctx: ImportContext,
  c: { index: [number, number]; org: OrganizationEntry; orgId: string; name: string; kind: ConnectionKind; connection: ConnectionEntry; row: ConnectionRow | null },
  issues: WorkspaceFileIssue[],
): Promise<void> {
  const { tx, now, wid, opts } = ctx;
  const { connection, row, name } = c;
  const protocol = CONNECTION_PROTOCOLS[c.kind];
  const id = row?.id ?? newId();
  const deps = { masterKey: opts.masterKey, secrets: ctx.secrets, now, sealedIfChanged: (stored: string | null, secret: string | undefined, purpose: string) => sealedIfChanged(opts.masterKey, stored, secret, purpose) };
  const settings = await protocol.file.import(deps, id, connection, row);
  if ("problem" in settings) {
    issues.push({ path: jsonPath(["organizations", c.index[0], "connections", c.index[1], ...settings.problem.path]), message: settings.problem.message });
    return;
  }
  const desired = {
    name,
    active: connection.enabled,
    defaultRoleIds: connection.default_roles.map((role) => ctx.ids.rolePk.get(role) as string),
    trustUpstreamMfa: connection.trust_upstream_mfa,
    admission: connection.admission,
    kind: c.kind,
    config: settings.config,
  };
  if (!row) {
    await tx.insert(enterpriseConnections).values({ id, workspaceId: wid, organizationId: c.orgId, ...desired, secretEncrypted: settings.secretEncrypted ?? null, createdAt: now, updatedAt: now });
  } else if (differs(row, desired) || settings.secretChanged) {
    await tx
      .update(enterpriseConnections)
      .set({ ...desired, ...(settings.secretEncrypted !== undefined ? { secretEncrypted: settings.secretEncrypted } : {}), updatedAt: now })
      .where(eq(enterpriseConnections.id, row.id));
  } else {
    return;
  }
  ctx.changes++;
  if (row ? row.admission !== desired.admission : desired.admission !== "verified_domains") await admissionSet(ctx, c.org.slug, id, name, desired.admission, row?.admission ?? null);
  await protocol.file.imported?.(tx, { workspaceId: wid, actor: opts.actor ?? null, organizationSlug: c.org.slug, connectionId: id, name, row, config: settings.config, now });
}

/** Who a connection admits is an explicit choice: the file setting it other than the default, or changing it, is audited. */
async function admissionSet(ctx: ImportContext, organizationSlug: string, connectionId: string, name: string, admission: string, previous: string | null): Promise<void> {
  await recordAudit(ctx.tx, {
    workspaceId: ctx.wid,
    type: "workspace.connection_admission_set",
    actor: ctx.opts.actor ?? null,
    subject: organizationSlug,
    data: { connection_id: connectionId, name, admission, previous, source: "workspace import" },
    at: ctx.now,
  });
}
