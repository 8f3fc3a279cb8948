/**
 * Organizations: members, enterprise connections and the email domains that send addresses to
 * them. Membership changes reuse lib/authz/model.ts; domains lib/federation/domains.ts. An
 * upstream client secret (a SAML connection's SP private key) is stored AES-256-GCM under the
 * master key and never shown again.
 */
import { X509Certificate } from "node:crypto";
import { and, asc, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { clients, enterpriseConnections, organizations, roles, users } from "../../db/schema";
import { addOrganizationMember, removeOrganizationMember } from "../authz/model";
import { encryptSecret, newId } from "../crypto";
import {
  applyDnsVerification,
  claimDomain,
  getDomain,
  lookupVerificationRecords,
  markDomainVerified,
  removeDomain as removeDomainRow,
  systemResolveTxt,
  type TxtResolver,
} from "../federation/domains";
import { admissionAllowed, CONNECTION_ADMISSIONS, SAML_ADMISSION_REASON, type ConnectionAdmission } from "../federation/providers";
import { samlSettings, SamlSettingsError } from "../federation/saml";
import { connectionSecretPurpose } from "../federation/secrets";
import { MAX_METADATA_BYTES, SAML_ATTRIBUTE_PRESET_NAMES, SAML_NAME_ID_FORMATS, samlEndpoints, type SamlConfig, type SamlNameIdFormat } from "../federation/upstream/saml-settings";
import { issuerFor } from "../http/context";
import type { Service } from "../service";
import { upstreamUrlProblem } from "../workspaces/document/social-providers";
import { checkbox, checked, email, id, optionalText, text } from "./forms";
import { ConsoleInputError, defineOperation, fieldError, formError } from "./operation";
import { normalizeEmail } from "../authn/email-address";

export async function getOrganization(service: Service, workspaceId: string, organizationId: string) {
  const [row] = await service.db
    .select()
    .from(organizations)
    .where(and(eq(organizations.workspaceId, workspaceId), eq(organizations.id, organizationId)))
    .limit(1);
  return row ?? null;
}

export interface ConnectionInfo {
  id: string;
  name: string;
  kind: "oidc" | "saml";
  active: boolean;
  config: Record<string, unknown>;
  hasSecret: boolean;
  defaultRoleIds: string[];
  trustUpstreamMfa: boolean;
  admission: ConnectionAdmission;
  updatedAt: Date;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  /** The condition the last failed sign-in failed on (for administrators only). */
  lastFailure: string | null;
}

/** The redirect URI to register at the upstream identity provider: the workspace's federation callback. */
export function federationCallbackUri(service: Service, workspaceId: string): string {
  return `${issuerFor(service.config.publicUrl, workspaceId)}/federation/callback`;
}

/** A SAML connection's addresses as a service provider (entity ID, ACS, metadata), under the workspace's issuer. */
export function samlServiceProvider(service: Service, workspaceId: string, connectionId: string) {
  return samlEndpoints(issuerFor(service.config.publicUrl, workspaceId), connectionId);
}

export async function listConnections(service: Service, workspaceId: string, organizationId: string): Promise<ConnectionInfo[]> {
  const rows = await service.db
    .select()
    .from(enterpriseConnections)
    .where(and(eq(enterpriseConnections.workspaceId, workspaceId), eq(enterpriseConnections.organizationId, organizationId)))
    .orderBy(asc(enterpriseConnections.name));
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    kind: r.kind,
    active: r.active,
    config: r.config,
    hasSecret: r.secretEncrypted !== null,
    defaultRoleIds: r.defaultRoleIds,
    trustUpstreamMfa: r.trustUpstreamMfa,
    admission: r.admission,
    updatedAt: r.updatedAt,
    lastSuccessAt: r.lastSuccessAt,
    lastFailureAt: r.lastFailureAt,
    lastFailure: r.lastFailure,
  }));
}

const slug = z
  .string({ error: "Enter a slug" })
  .trim()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "Use 1–63 characters of a–z, 0–9 and -, starting with a letter or digit");

export const createOrganization = defineOperation({
  name: "organization.created",
  role: "admin",
  input: z.object({ slug, name: text("a name") }),
  async run(ctx, input) {
    const inserted = await ctx.db
      .insert(organizations)
      .values({ id: newId(), workspaceId: ctx.access.workspace.id, slug: input.slug, name: input.name, active: true, createdAt: ctx.now, updatedAt: ctx.now })
      .onConflictDoNothing()
      .returning({ id: organizations.id });
    if (inserted.length === 0) throw fieldError("slug", "An organization with this slug already exists");
    return { result: { id: inserted[0].id }, audit: { target: input.slug, data: { name: input.name } } };
  },
});

export const updateOrganization = defineOperation({
  name: "organization.updated",
  role: "admin",
  input: z.object({ organization_id: id("organization"), name: text("a name"), active: checkbox() }),
  async run(ctx, input) {
    const updated = await ctx.db
      .update(organizations)
      .set({ name: input.name, active: input.active, updatedAt: ctx.now })
      .where(and(eq(organizations.workspaceId, ctx.access.workspace.id), eq(organizations.id, input.organization_id)))
      .returning({ slug: organizations.slug });
    if (updated.length === 0) throw formError("This organization no longer exists");
    return { result: null, audit: { target: updated[0].slug, data: { name: input.name, active: input.active } } };
  },
});

export const addMember = defineOperation({
  name: "organization.member_added",
  role: "admin",
  input: z.object({ organization: id("organization"), email: email() }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const [user] = await ctx.db
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.workspaceId, wid), eq(users.emailNormalized, normalizeEmail(input.email)!)))
      .limit(1);
    if (!user) throw fieldError("email", "No user of this workspace has this email");
    const added = await addOrganizationMember(ctx.db, { workspaceId: wid, clock: ctx.service.clock, actor: ctx.access.operator.userId, organization: input.organization, userId: user.id });
    if (!added) throw fieldError("email", "This user is already a member");
    return { result: null, audit: { target: input.organization, data: { email: input.email, user_id: user.id } } };
  },
});

export const removeMember = defineOperation({
  name: "organization.member_removed",
  role: "admin",
  input: z.object({ organization: id("organization"), user_id: id("user") }),
  async run(ctx, input) {
    const removed = await removeOrganizationMember(ctx.db, {
      workspaceId: ctx.access.workspace.id,
      clock: ctx.service.clock,
      actor: ctx.access.operator.userId,
      organization: input.organization,
      userId: input.user_id,
    });
    if (!removed) throw formError("This user is not a member");
    return { result: null, audit: { target: input.organization, data: { user_id: input.user_id } } };
  },
});

/** An upstream issuer: https, or http on a loopback host (a local identity provider). */
const optionalIssuer = z.preprocess(
  (v) => (typeof v === "string" && v.trim() === "" ? undefined : typeof v === "string" ? v.trim() : v),
  z
    .string()
    .superRefine((v, ctx) => {
      const problem = upstreamUrlProblem(v);
      if (problem) ctx.addIssue({ code: "custom", message: `The issuer ${problem}` });
    })
    .optional(),
);

/**
 * Creates or updates an enterprise connection of an organization. OIDC: issuer, client id, the
 * client secret (set once, kept when left empty, never shown). SAML (lib/federation/saml.ts): the
 * identity provider's metadata pasted or fetched (or its entity ID, single sign-on URL and signing
 * certificates typed), the attribute preset, signed AuthnRequests, SHA-1 for a legacy provider
 * (audited, and shown as a warning); its SP key pair is made on creation and kept. Both: the roles
 * a new member gets, whether the upstream's MFA counts, and who a first sign-in admits.
 */
export const saveConnection = defineOperation({
  name: "organization.connection_saved",
  role: "admin",
  input: z.object({
    organization_id: id("organization"),
    connection_id: optionalText(200),
    name: text("a name"),
    kind: z.enum(["oidc", "saml"], { error: "Choose OIDC or SAML" }),
    active: checkbox(),
    issuer: optionalIssuer,
    client_id: optionalText(200),
    client_secret: optionalText(2000),
    metadata_url: optionalText(2000),
    metadata_xml: optionalText(MAX_METADATA_BYTES),
    refresh_metadata: checkbox(),
    idp_entity_id: optionalText(1024),
    sso_url: optionalText(2000),
    idp_certificate: optionalText(16_384),
    idp_certificate_next: optionalText(16_384),
    sign_requests: checkbox(),
    allow_sha1: checkbox(),
    name_id_format: z.enum(Object.keys(SAML_NAME_ID_FORMATS) as [SamlNameIdFormat, ...SamlNameIdFormat[]], { error: "Choose a NameID format" }).default("persistent"),
    attribute_preset: z.enum(SAML_ATTRIBUTE_PRESET_NAMES, { error: "Choose the identity provider's attribute names" }).default("custom"),
    attribute_email: optionalText(512),
    attribute_name: optionalText(512),
    attribute_given_name: optionalText(512),
    attribute_family_name: optionalText(512),
    idp_initiated_client_id: optionalText(128),
    default_role_ids: checked(),
    trust_upstream_mfa: checkbox(),
    /** Who a first sign-in admits; absent means the default (verified domains only), never a wider rule. */
    admission: z.enum(CONNECTION_ADMISSIONS as [ConnectionAdmission, ...ConnectionAdmission[]], { error: "Choose who this connection admits" }).default("verified_domains"),
  }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const [org] = await ctx.db
      .select({ id: organizations.id, slug: organizations.slug })
      .from(organizations)
      .where(and(eq(organizations.workspaceId, wid), eq(organizations.id, input.organization_id)))
      .limit(1);
    if (!org) throw formError("This organization no longer exists");
    const errors: Record<string, string> = {};
    if (input.kind === "oidc") {
      if (!input.issuer) errors.issuer = "Enter the upstream issuer";
      if (!input.client_id) errors.client_id = "Enter the client id registered upstream";
    } else {
      if (!admissionAllowed("saml", input.admission)) errors.admission = `A SAML connection admits verified domains only: ${SAML_ADMISSION_REASON}`;
      if (input.idp_initiated_client_id) {
        const [app] = await ctx.db
          .select({ type: clients.type })
          .from(clients)
          .where(and(eq(clients.workspaceId, wid), eq(clients.clientId, input.idp_initiated_client_id)))
          .limit(1);
        if (!app || app.type === "M2M") errors.idp_initiated_client_id = "Choose an application of this workspace that signs users in";
      }
    }
    const roleIds = [...new Set(input.default_role_ids)];
    if (roleIds.length > 0) {
      const found = await ctx.db
        .select({ id: roles.id })
        .from(roles)
        .where(and(eq(roles.workspaceId, wid), inArray(roles.id, roleIds)));
      if (found.length !== roleIds.length) errors.default_role_ids = "A chosen role no longer exists: reload the page";
    }
    if (Object.keys(errors).length) throw new ConsoleInputError(errors);

    const connectionId = input.connection_id ?? newId();
    let previous: { kind: "oidc" | "saml"; admission: ConnectionAdmission; config: Record<string, unknown>; secretEncrypted: string | null; allowSha1: boolean } | null = null;
    if (input.connection_id) {
      const [row] = await ctx.db
        .select({ kind: enterpriseConnections.kind, admission: enterpriseConnections.admission, config: enterpriseConnections.config, secretEncrypted: enterpriseConnections.secretEncrypted })
        .from(enterpriseConnections)
        .where(and(eq(enterpriseConnections.workspaceId, wid), eq(enterpriseConnections.organizationId, org.id), eq(enterpriseConnections.id, input.connection_id)))
        .limit(1);
      if (!row) throw formError("This connection no longer exists");
      previous = { ...row, allowSha1: row.kind === "saml" && row.config.allow_sha1 === true };
    }

    let config: Record<string, unknown>;
    let secretEncrypted: string | null | undefined;
    let auditConfig: Record<string, unknown>;
    let newSpKey = false;
    if (input.kind === "oidc") {
      config = { issuer: input.issuer, client_id: input.client_id };
      auditConfig = config;
      // A new secret when given; otherwise the old one, but never a SAML connection's SP key.
      secretEncrypted = input.client_secret
        ? encryptSecret(ctx.service.config.masterKey, input.client_secret, connectionSecretPurpose(connectionId))
        : previous?.kind === "saml"
          ? null
          : undefined;
    } else {
      let saml;
      try {
        saml = await samlSettings(
          { masterKey: ctx.service.config.masterKey, fetch: ctx.service.fetch },
          connectionId,
          {
            metadataXml: input.metadata_xml,
            metadataUrl: input.metadata_url,
            refreshMetadata: input.refresh_metadata,
            idpEntityId: input.idp_entity_id,
            ssoUrl: input.sso_url,
            idpCertificates: [input.idp_certificate, input.idp_certificate_next].filter((c): c is string => !!c),
            signRequests: input.sign_requests,
            allowSha1: input.allow_sha1,
            nameIdFormat: input.name_id_format,
            attributePreset: input.attribute_preset,
            attributes: { email: input.attribute_email, name: input.attribute_name ?? null, given_name: input.attribute_given_name ?? null, family_name: input.attribute_family_name ?? null },
            idpInitiatedClientId: input.idp_initiated_client_id ?? null,
          },
          previous?.kind === "saml" ? previous : null,
          ctx.now,
        );
      } catch (error) {
        if (error instanceof SamlSettingsError) throw fieldError(error.field === "attributes" ? "attribute_email" : error.field, error.message);
        throw error;
      }
      config = saml.config;
      secretEncrypted = saml.secretEncrypted;
      newSpKey = saml.newSpKey;
      auditConfig = samlAuditSummary(saml.config);
    }
    const settings = {
      name: input.name,
      kind: input.kind,
      active: input.active,
      config,
      defaultRoleIds: roleIds,
      trustUpstreamMfa: input.trust_upstream_mfa,
      admission: input.admission,
    };
    if (previous) {
      const updated = await ctx.db
        .update(enterpriseConnections)
        .set({ ...settings, ...(secretEncrypted !== undefined ? { secretEncrypted } : {}), updatedAt: ctx.now })
        .where(and(eq(enterpriseConnections.workspaceId, wid), eq(enterpriseConnections.organizationId, org.id), eq(enterpriseConnections.id, connectionId)))
        .returning({ id: enterpriseConnections.id });
      if (updated.length === 0) throw formError("This connection no longer exists");
    } else {
      await ctx.db.insert(enterpriseConnections).values({
        id: connectionId,
        workspaceId: wid,
        organizationId: org.id,
        ...settings,
        secretEncrypted: secretEncrypted ?? null,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      });
    }
    const previousAdmission = previous?.admission ?? null;
    const allowSha1 = input.kind === "saml" && input.allow_sha1;
    return {
      result: { id: connectionId },
      audit: {
        target: org.slug,
        data: {
          connection_id: connectionId,
          name: input.name,
          kind: input.kind,
          active: input.active,
          config: auditConfig,
          default_role_ids: roleIds,
          trust_upstream_mfa: settings.trustUpstreamMfa,
          admission: settings.admission,
          // Who the connection admits is an explicit choice: its change (or a new connection's wider rule) stands out in the log.
          admission_changed: previous ? previousAdmission !== settings.admission : settings.admission !== "verified_domains",
          ...(previous && previousAdmission !== settings.admission ? { admission_previous: previousAdmission } : {}),
          secret_changed: input.kind === "oidc" ? !!input.client_secret : newSpKey,
          // Accepting SHA-1 signatures weakens the connection: turning it on or off stands out too.
          ...(input.kind === "saml" ? { legacy_signatures: allowSha1, legacy_signatures_changed: allowSha1 !== (previous?.allowSha1 ?? false) } : {}),
        },
      },
    };
  },
});

/** What the audit log records of a SAML connection's settings: no certificates in full, their SHA-256 fingerprints. */
function samlAuditSummary(config: SamlConfig): Record<string, unknown> {
  const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;
  return {
    idp_entity_id: config.idp_entity_id,
    sso_url: config.sso_url,
    metadata_url: config.metadata_url,
    idp_certificates: config.idp_certificates.map(fingerprint),
    sp_certificate: fingerprint(config.sp_certificate),
    sign_requests: config.sign_requests,
    name_id_format: config.name_id_format,
    attribute_preset: config.attribute_preset,
    attributes: config.attributes,
    idp_initiated_client_id: config.idp_initiated_client_id,
  };
}

async function organizationSlug(ctx: { db: Service["db"]; access: { workspace: { id: string } } }, organizationId: string): Promise<string> {
  const [org] = await ctx.db
    .select({ slug: organizations.slug })
    .from(organizations)
    .where(and(eq(organizations.workspaceId, ctx.access.workspace.id), eq(organizations.id, organizationId)))
    .limit(1);
  if (!org) throw formError("This organization no longer exists");
  return org.slug;
}

/** Claims an email domain for the organization, unverified until DNS or an operator says so. */
export const addDomain = defineOperation({
  name: "organization.domain_claimed",
  role: "admin",
  input: z.object({ organization_id: id("organization"), domain: text("a domain", 300) }),
  async run(ctx, input) {
    const slug = await organizationSlug(ctx, input.organization_id);
    const claimed = await claimDomain(ctx.db, { workspaceId: ctx.access.workspace.id, organizationId: input.organization_id, domain: input.domain, now: ctx.now });
    return { result: { id: claimed.id, domain: claimed.domain }, audit: { target: slug, data: { domain: claimed.domain, domain_id: claimed.id } } };
  },
});

/**
 * Where "Check DNS" asks for TXT records; tests replace it. The lookup runs before the
 * operation's transaction opens (a slow DNS server must not hold the database).
 */
export const domainDns: { resolveTxt: TxtResolver } = { resolveTxt: systemResolveTxt };

/** Looks for the domain's TXT record; found, the domain is verified by DNS (audited); not found yet, the form says why. */
export const checkDomainDns = defineOperation({
  name: "organization.domain_verified",
  role: "admin",
  input: z.object({ organization_id: id("organization"), domain_id: id("domain"), domain: text("the domain", 300) }),
  // The form names the domain so the lookup can run outside the transaction; run() checks it is the claimed one.
  prepare: (input) => lookupVerificationRecords(input.domain.toLowerCase(), domainDns.resolveTxt),
  async run(ctx, input, lookup) {
    const slug = await organizationSlug(ctx, input.organization_id);
    const current = await getDomain(ctx.db, ctx.access.workspace.id, input.domain_id);
    if (!current || current.organizationId !== input.organization_id) throw formError("This domain is no longer claimed");
    if (current.domain !== input.domain.toLowerCase()) throw formError("The domain changed meanwhile: reload the page");
    const outcome = await applyDnsVerification(ctx.db, { workspaceId: ctx.access.workspace.id, domainId: current.id, organizationId: input.organization_id, now: ctx.now, lookup });
    if (!outcome.verified) throw formError(`Not found yet: ${outcome.reason}. DNS changes can take a while to appear; check again later.`);
    return {
      result: { verified: true },
      audit: outcome.changed ? { target: slug, data: { domain: current.domain, domain_id: current.id, method: "dns" } } : null,
    };
  },
});

/** An operator's word that the organization controls the domain, without DNS: audited as such. */
export const markDomainVerifiedByOperator = defineOperation({
  name: "organization.domain_verified",
  role: "admin",
  input: z.object({ organization_id: id("organization"), domain_id: id("domain") }),
  async run(ctx, input) {
    const slug = await organizationSlug(ctx, input.organization_id);
    const marked = await markDomainVerified(ctx.db, {
      workspaceId: ctx.access.workspace.id,
      organizationId: input.organization_id,
      domainId: input.domain_id,
      now: ctx.now,
      method: "operator",
    });
    if (!marked.changed) throw formError("This domain is verified already");
    return { result: null, audit: { target: slug, data: { domain: marked.domain.domain, domain_id: marked.domain.id, method: "operator" } } };
  },
});

/** Removes a claim: addresses in the domain stop going to this organization's connection. */
export const removeDomain = defineOperation({
  name: "organization.domain_removed",
  role: "admin",
  input: z.object({ organization_id: id("organization"), domain_id: id("domain") }),
  async run(ctx, input) {
    const slug = await organizationSlug(ctx, input.organization_id);
    const removed = await removeDomainRow(ctx.db, { workspaceId: ctx.access.workspace.id, organizationId: input.organization_id, domainId: input.domain_id });
    if (!removed) throw formError("This domain is no longer claimed");
    return {
      result: null,
      audit: { target: slug, data: { domain: removed.domain, domain_id: removed.id, was_verified: removed.verificationMethod } },
    };
  },
});
