/**
 * SAML 2.0 enterprise connections, one folder: the settings (./config.ts, ./settings.ts), the
 * round trip and the response's verification (./upstream.ts, ./xml.ts), the ACS and SP metadata
 * (./routes.ts), the replay store's retention (./retention.ts), and this descriptor: the console's
 * form fields and save, the workspace file's `saml` object (schema, checks, export, import).
 * The SP key pair is made on creation and kept: its private key is the connection's secret
 * (never shown, never exported), its certificate is in the settings.
 */
import { X509Certificate } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { clients } from "../../../../db/schema";
import { recordAudit } from "../../../audit/events";
import { fieldError } from "../../../surfaces/operation";
import { defineConnectionProtocol, type PreviousConnection } from "../contract";
import { MAX_IDP_CERTIFICATES, MAX_METADATA_BYTES, SAML_ATTRIBUTE_PRESET_NAMES, SAML_NAME_ID_FORMATS, samlConfigSchema, type SamlConfig, type SamlNameIdFormat } from "../../upstream/saml-settings";
import { samlRoutes } from "./routes";
import { fetchIdpMetadata, samlSettings, SamlSettingsError } from "./settings";
import { parseIdpMetadata, SamlMetadataError, type IdpMetadata } from "../../upstream/saml-xml";

import { samlAssertionRetention } from "./retention";
export { samlAssertionRetention };
export { samlServiceProvider } from "./settings";

export interface SamlForm {
  metadata_url?: string;
  metadata_xml?: string;
  refresh_metadata: boolean;
  idp_entity_id?: string;
  sso_url?: string;
  idp_certificate?: string;
  idp_certificate_next?: string;
  sign_requests: boolean;
  allow_sha1: boolean;
  name_id_format: SamlNameIdFormat;
  attribute_preset: (typeof SAML_ATTRIBUTE_PRESET_NAMES)[number];
  attribute_email?: string;
  attribute_name?: string;
  attribute_given_name?: string;
  attribute_family_name?: string;
  idp_initiated_client_id?: string;
}

const attributeName = z.string().trim().min(1, "must not be blank").max(512, "must be at most 512 characters");

/**
 * The workspace file's `saml` object: the identity provider's metadata (`metadata_xml`), or its
 * entity ID, single sign-on URL and signing certificates (what export writes). The SP key pair is
 * made on import and kept; it is never in the file.
 */
const fileSchema = (upstreamUrl: z.ZodType<string>) =>
  z.strictObject({
    metadata_xml: z.string().max(MAX_METADATA_BYTES, `must be at most ${MAX_METADATA_BYTES / 1024} KiB`).optional(),
    idp_entity_id: z.string().trim().min(1, "must not be blank").max(1024, "must be at most 1024 characters").optional(),
    sso_url: upstreamUrl.optional(),
    idp_certificates: z
      .array(z.string().max(16_384, "must be at most 16 KiB"))
      .min(1, "must have a certificate")
      .max(MAX_IDP_CERTIFICATES, `must have at most ${MAX_IDP_CERTIFICATES} certificates (current and next)`)
      .optional(),
    sign_requests: z.boolean().default(false),
    /** Accept SHA-1 signatures from a legacy identity provider (audited on import). */
    allow_sha1: z.boolean().default(false),
    name_id_format: z.enum(Object.keys(SAML_NAME_ID_FORMATS) as [SamlNameIdFormat, ...SamlNameIdFormat[]]).default("persistent"),
    attribute_preset: z.enum(SAML_ATTRIBUTE_PRESET_NAMES).default("custom"),
    /** The application (client id) a sign-in started at the identity provider is sent to, to sign in from there. */
    idp_initiated_application: z.string().max(128, "must be at most 128 characters").optional(),
    /** The attribute names, for the `custom` preset. */
    attributes: z.strictObject({ email: attributeName, name: attributeName.optional(), given_name: attributeName.optional(), family_name: attributeName.optional() }).optional(),
  });
export type SamlEntry = { saml?: z.output<ReturnType<typeof fileSchema>> };

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

/** Whether the stored connection accepted SHA-1 signatures. */
const acceptedSha1 = (previous: Pick<PreviousConnection, "kind" | "config"> | null) => previous?.kind === "saml" && previous.config.allow_sha1 === true;

export const SAML = defineConnectionProtocol<SamlForm, SamlEntry>({
  retention: [samlAssertionRetention],
  kind: "saml",
  label: "SAML 2.0",
  noun: "a SAML connection",
  verifiedDomainsOnly: "SAML does not say whether an address is verified",
  clientSecret: false,
  console: {
    fields: (f) => ({
      metadata_url: f.optionalText(2000),
      metadata_xml: f.optionalText(MAX_METADATA_BYTES),
      refresh_metadata: f.checkbox(),
      idp_entity_id: f.optionalText(1024),
      sso_url: f.optionalText(2000),
      idp_certificate: f.optionalText(16_384),
      idp_certificate_next: f.optionalText(16_384),
      sign_requests: f.checkbox(),
      allow_sha1: f.checkbox(),
      name_id_format: z.enum(Object.keys(SAML_NAME_ID_FORMATS) as [SamlNameIdFormat, ...SamlNameIdFormat[]], { error: "Choose a NameID format" }).default("persistent"),
      attribute_preset: z.enum(SAML_ATTRIBUTE_PRESET_NAMES, { error: "Choose the identity provider's attribute names" }).default("custom"),
      attribute_email: f.optionalText(512),
      attribute_name: f.optionalText(512),
      attribute_given_name: f.optionalText(512),
      attribute_family_name: f.optionalText(512),
      idp_initiated_client_id: f.optionalText(128),
    }),
    // The identity provider's metadata read before saving: its entity ID, SSO URL and certificates
    // fill the fields, so the administrator sees them (and our SP addresses) first.
    async prefill(ctx, input) {
      const field = input.metadata_xml ? "metadata_xml" : "metadata_url";
      let idp: IdpMetadata;
      try {
        if (input.metadata_xml) idp = await parseIdpMetadata(input.metadata_xml);
        else if (input.metadata_url) idp = await fetchIdpMetadata(ctx.service, input.metadata_url);
        else return { errors: { metadata_xml: "Paste the identity provider's metadata, or give its URL" } };
      } catch (error) {
        if (error instanceof SamlMetadataError) return { errors: { [field]: error.message } };
        throw error;
      }
      return {
        // The pasted XML is spent: the fields now hold what it said.
        values: { metadata_xml: "", idp_entity_id: idp.entityId, sso_url: idp.ssoUrl, idp_certificate: idp.certificates[0] ?? "", idp_certificate_next: idp.certificates[1] ?? "" },
        message: `Read the metadata of ${idp.entityId}: check the fields, give the identity provider the addresses shown, then add the connection.`,
      };
    },
    async check(ctx, input, errors) {
      if (!input.idp_initiated_client_id) return;
      const [app] = await ctx.db
        .select({ type: clients.type })
        .from(clients)
        .where(and(eq(clients.workspaceId, ctx.workspaceId), eq(clients.clientId, input.idp_initiated_client_id)))
        .limit(1);
      if (!app || app.type === "M2M") errors.idp_initiated_client_id = "Choose an application of this workspace that signs users in";
    },
    async settings(ctx, input, previous) {
      let saml;
      try {
        saml = await samlSettings(
          { masterKey: ctx.service.config.masterKey, fetch: ctx.service.fetch },
          ctx.connectionId,
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
      return {
        config: saml.config,
        secretEncrypted: saml.secretEncrypted,
        auditConfig: samlAuditSummary(saml.config),
        secretChanged: saml.newSpKey,
        // Accepting SHA-1 signatures weakens the connection: turning it on or off stands out in the log.
        auditData: { legacy_signatures: input.allow_sha1, legacy_signatures_changed: input.allow_sha1 !== acceptedSha1(previous) },
      };
    },
  },
  file: {
    fields: (f) => ({ saml: fileSchema(f.upstreamUrl).optional() }),
    own: ["saml"],
    check(entry, issue) {
      const saml = entry.saml;
      if (saml === undefined) issue("saml", "is required for a SAML connection");
      else if (saml.metadata_xml === undefined && (saml.idp_entity_id === undefined || saml.sso_url === undefined || saml.idp_certificates === undefined)) {
        issue("saml", "needs metadata_xml, or idp_entity_id, sso_url and idp_certificates");
      }
    },
    crossCheck(entry, refs, add) {
      const saml = entry.saml;
      const target = saml && typeof saml === "object" ? (saml as Record<string, unknown>).idp_initiated_application : undefined;
      if (typeof target !== "string") return;
      const app = refs.applications.get(target);
      if (!app) add(["saml", "idp_initiated_application"], `unknown application ${JSON.stringify(target)} (not in applications)`);
      else if (app.type === "M2M") add(["saml", "idp_initiated_application"], "must be an application that signs users in (not M2M)");
    },
    secretReferences: () => [],
    // The identity provider and options; the SP key pair stays with this installation.
    export(stored) {
      const result = samlConfigSchema.safeParse(stored);
      if (!result.success) return null;
      const parsed = result.data;
      const a = parsed.attributes;
      return {
        saml: {
          idp_entity_id: parsed.idp_entity_id,
          sso_url: parsed.sso_url,
          idp_certificates: parsed.idp_certificates,
          sign_requests: parsed.sign_requests,
          allow_sha1: parsed.allow_sha1,
          name_id_format: parsed.name_id_format,
          attribute_preset: parsed.attribute_preset,
          ...(parsed.idp_initiated_client_id ? { idp_initiated_application: parsed.idp_initiated_client_id } : {}),
          ...(parsed.attribute_preset === "custom"
            ? { attributes: { email: a.email, ...(a.name ? { name: a.name } : {}), ...(a.given_name ? { given_name: a.given_name } : {}), ...(a.family_name ? { family_name: a.family_name } : {}) } }
            : {}),
        },
      };
    },
    async import(deps, connectionId, entry, row) {
      const saml = entry.saml!;
      try {
        const settings = await samlSettings(
          { masterKey: deps.masterKey },
          connectionId,
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
          deps.now,
        );
        return { config: settings.config as unknown as Record<string, unknown>, secretEncrypted: settings.secretEncrypted, secretChanged: settings.newSpKey };
      } catch (error) {
        if (!(error instanceof SamlSettingsError)) throw error;
        const field = error.field === "idp_certificate" ? "idp_certificates" : error.field === "metadata_url" ? "metadata_xml" : error.field;
        return { problem: { path: ["saml", field], message: error.message } };
      }
    },
    // Accepting SHA-1 signatures weakens the connection: the file turning it on or off is audited.
    async imported(tx, e) {
      const legacy = e.config.allow_sha1 === true;
      if (legacy === (e.row?.config.allow_sha1 === true)) return;
      await recordAudit(tx, {
        workspaceId: e.workspaceId,
        type: "workspace.connection_legacy_signatures_set",
        actor: e.actor,
        subject: e.organizationSlug,
        data: { connection_id: e.connectionId, name: e.name, legacy_signatures: legacy, source: "workspace import" },
        at: e.now,
      });
    },
  },
  routes: samlRoutes,
});
