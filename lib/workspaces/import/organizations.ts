// The `organizations` section: organizations by slug, their email domains and their OIDC and SAML connections (members are a later step, after users).
import { and, eq } from "drizzle-orm";
import { enterpriseConnections, organizationDomains, organizations } from "../../../db/schema";
import { recordAudit } from "../../audit/events";
import { encryptSecret, newId, randomToken } from "../../crypto";
import { normalizeDomain } from "../../federation/domains";
import { WorkspaceFileError, type WorkspaceFileIssue } from "../document";
import type { OrganizationEntry } from "../document/schema";
import { jsonPath } from "../document/paths";
import { differs, type ImportContext } from "./context";
import { sealedIfChanged } from "./social-providers";
import { samlSettings, SamlSettingsError } from "../../federation/saml";
import { connectionSecretPurpose } from "../../federation/secrets";

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
 * Connections by name within the organization; those the file leaves out stay as they are. OIDC:
 * no `client_secret` keeps the stored one. SAML: the settings of lib/federation/saml.ts, the SP
 * key pair made for a new connection and kept for an existing one. A connection keeps its protocol:
 * a name that is another protocol's connection is refused.
 */
async function importConnections(ctx: ImportContext, i: number, org: OrganizationEntry, issues: WorkspaceFileIssue[]): Promise<void> {
  const { tx, now, wid, opts } = ctx;
  const orgId = ctx.ids.orgPk.get(org.slug) as string;
  const existing = await tx
    .select()
    .from(enterpriseConnections)
    .where(and(eq(enterpriseConnections.workspaceId, wid), eq(enterpriseConnections.organizationId, orgId)));
  for (const [k, connection] of org.connections.entries()) {
    const name = connection.name.trim();
    const row = existing.find((c) => c.name === name);
    if (row && row.kind !== connection.protocol) {
      issues.push({ path: jsonPath(["organizations", i, "connections", k, "name"]), message: `names a ${row.kind.toUpperCase()} connection of organization ${org.slug}: give the ${connection.protocol.toUpperCase()} connection another name` });
      continue;
    }
    const common = {
      name,
      active: connection.enabled,
      defaultRoleIds: connection.default_roles.map((role) => ctx.ids.rolePk.get(role) as string),
      trustUpstreamMfa: connection.trust_upstream_mfa,
      admission: connection.admission,
    };
    if (connection.protocol === "saml") {
      await importSamlConnection(ctx, i, k, org, connection, common, row ?? null, issues);
      continue;
    }
    const desired = { ...common, kind: "oidc" as const, config: { issuer: connection.issuer, client_id: connection.client_id } };
    const secret = connection.client_secret ? ctx.secrets.get(connection.client_secret.env) : undefined;
    if (!row) {
      const id = newId();
      await tx.insert(enterpriseConnections).values({
        id,
        workspaceId: wid,
        organizationId: orgId,
        ...desired,
        secretEncrypted: secret === undefined ? null : encryptSecret(opts.masterKey, secret, connectionSecretPurpose(id)),
        createdAt: now,
        updatedAt: now,
      });
      ctx.changes++;
      if (desired.admission !== "verified_domains") await admissionSet(ctx, org.slug, id, name, desired.admission, null);
      continue;
    }
    const sealed = sealedIfChanged(opts.masterKey, row.secretEncrypted, secret, connectionSecretPurpose(row.id));
    if (differs(row, desired) || sealed) {
      await tx
        .update(enterpriseConnections)
        .set({ ...desired, ...(sealed ? { secretEncrypted: sealed } : {}), updatedAt: now })
        .where(eq(enterpriseConnections.id, row.id));
      ctx.changes++;
      if (row.admission !== desired.admission) await admissionSet(ctx, org.slug, row.id, name, desired.admission, row.admission);
    }
  }
}

type ConnectionEntry = OrganizationEntry["connections"][number];
type ConnectionRow = typeof enterpriseConnections.$inferSelect;

async function importSamlConnection(
  ctx: ImportContext,
  i: number,
  k: number,
  org: OrganizationEntry,
  connection: ConnectionEntry,
  common: Pick<ConnectionRow, "name" | "active" | "defaultRoleIds" | "trustUpstreamMfa" | "admission">,
  row: ConnectionRow | null,
  issues: WorkspaceFileIssue[],
): Promise<void> {
  const { tx, now, wid, opts } = ctx;
  const saml = connection.saml!;
  const id = row?.id ?? newId();
  let settings;
  try {
    settings = await samlSettings(
      { masterKey: opts.masterKey },
      id,
      {
        metadataXml: saml.metadata_xml,
        idpEntityId: saml.idp_entity_id,
        ssoUrl: saml.sso_url,
        idpCertificates: saml.idp_certificates,
        signRequests: saml.sign_requests,
        allowSha1: saml.allow_sha1,
        nameIdFormat: saml.name_id_format,
        attributePreset: saml.attribute_preset,
        attributes: saml.attributes,
        idpInitiatedClientId: saml.idp_initiated_application ?? null,
      },
      row,
      now,
    );
  } catch (error) {
    if (!(error instanceof SamlSettingsError)) throw error;
    const field = error.field === "idp_certificate" ? "idp_certificates" : error.field === "metadata_url" ? "metadata_xml" : error.field;
    issues.push({ path: jsonPath(["organizations", i, "connections", k, "saml", field]), message: error.message });
    return;
  }
  const desired = { ...common, kind: "saml" as const, config: settings.config as unknown as Record<string, unknown> };
  if (!row) {
    await tx.insert(enterpriseConnections).values({ id, workspaceId: wid, organizationId: ctx.ids.orgPk.get(org.slug) as string, ...desired, secretEncrypted: settings.secretEncrypted, createdAt: now, updatedAt: now });
    ctx.changes++;
  } else if (differs(row, desired) || settings.newSpKey) {
    await tx.update(enterpriseConnections).set({ ...desired, secretEncrypted: settings.secretEncrypted, updatedAt: now }).where(eq(enterpriseConnections.id, row.id));
    ctx.changes++;
  } else {
    return;
  }
  // Accepting SHA-1 signatures weakens the connection: the file turning it on or off is audited.
  const previousSha1 = row?.config.allow_sha1 === true;
  if (settings.config.allow_sha1 !== previousSha1) {
    await recordAudit(tx, {
      workspaceId: wid,
      type: "workspace.connection_legacy_signatures_set",
      actor: opts.actor ?? null,
      subject: org.slug,
      data: { connection_id: id, name: common.name, legacy_signatures: settings.config.allow_sha1, source: "workspace import" },
      at: now,
    });
  }
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
