/**
 * The stateful side of SAML connections: their settings made from what an administrator gives
 * (the identity provider's metadata pasted or fetched, or its fields typed; the attribute preset;
 * a fresh SP key pair on creation, its private key sealed under the master key), the replay store
 * of accepted assertion IDs, and the SP metadata a connection publishes.
 */
import { and, eq } from "drizzle-orm";
import { clients, enterpriseConnections, samlAssertionReplays } from "../../../../db/schema";
import { applicationHome } from "../../../uris";
import { encryptSecret } from "../../../crypto";
import { issuerFor, type EndpointContext } from "../../../http/context";
import type { Service } from "../../../service";
import { connectionSecretPurpose } from "../../secrets";
import { generateSpKeyPair } from "../../upstream/self-signed-certificate";
import { upstreamUrl, UPSTREAM_TIMEOUT_MS } from "../../upstream/transport";
import { FederationError } from "../../upstream/contract";
import { CodedError } from "../../../coded-error";
import {
  certificatePem,
  MAX_IDP_CERTIFICATES,
  presetMapping,
  samlConfigSchema,
  type SamlAttributeMapping,
  type SamlAttributePreset,
  samlEndpoints,
  type SamlConfig,
  type SamlNameIdFormat,
} from "../../upstream/saml-settings";
import { parseIdpMetadata, SamlMetadataError, spMetadata, type IdpMetadata } from "../../upstream/saml-xml";

/** A setting that cannot be used, named by its field (the console's form and the workspace file map it). */
export class SamlSettingsError extends CodedError<"invalid_saml_settings"> {
  constructor(
    readonly field: "metadata_xml" | "metadata_url" | "idp_entity_id" | "sso_url" | "idp_certificate" | "attributes",
    message: string,
  ) {
    super("invalid_saml_settings", message, { field });
    this.name = "SamlSettingsError";
  }
}

/** Fetches an identity provider's metadata over https (http on loopback only), through the service's outbound rules. */
export async function fetchIdpMetadata(service: Pick<Service, "fetch">, address: string): Promise<IdpMetadata> {
  let url: URL;
  try {
    url = upstreamUrl(address, "metadata URL");
  } catch (error) {
    throw new SamlMetadataError(error instanceof FederationError ? error.message : "The metadata URL is not usable");
  }
  let response: Response;
  try {
    response = await service.fetch(url, { redirect: "manual", signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_MS), headers: { accept: "application/samlmetadata+xml, application/xml, text/xml" } });
  } catch (error) {
    throw new SamlMetadataError(`The metadata could not be fetched from ${url.origin}: ${error instanceof Error ? error.message : "unreachable"}`);
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    throw new SamlMetadataError(`The metadata URL answered ${response.status}${response.status >= 300 && response.status < 400 ? " (a redirect: give the final address)" : ""}`);
  }
  const body = await response.arrayBuffer().catch(() => null);
  if (!body) throw new SamlMetadataError("The metadata could not be read");
  // parseIdpMetadata bounds its size.
  return parseIdpMetadata(Buffer.from(body).toString("utf8"));
}

export interface SamlSettingsInput {
  /** The identity provider's metadata, pasted; or its address, fetched when new or `refreshMetadata`. */
  metadataXml?: string;
  metadataUrl?: string;
  refreshMetadata?: boolean;
  /** Typed instead of metadata (ignored when metadata is given this time). */
  idpEntityId?: string;
  ssoUrl?: string;
  idpCertificates?: string[];
  signRequests: boolean;
  allowSha1: boolean;
  nameIdFormat: SamlNameIdFormat;
  attributePreset: SamlAttributePreset;
  /** For the `custom` preset. */
  attributes?: Partial<SamlAttributeMapping>;
  /** The application a sign-in started at the identity provider is sent to (its home page), or none. */
  idpInitiatedClientId?: string | null;
}

/**
 * A SAML connection's settings and sealed SP key from `input`, keeping what `previous` had where
 * the input says nothing (its SP key pair always, once made). Throws SamlSettingsError.
 */
export async function samlSettings(
  deps: { masterKey: Buffer; fetch?: Service["fetch"] },
  connectionId: string,
  input: SamlSettingsInput,
  previous: { config: Record<string, unknown> | null; secretEncrypted: string | null } | null,
  now: Date,
): Promise<{ config: SamlConfig; secretEncrypted: string; newSpKey: boolean }> {
  const before = previous ? samlConfigSchema.safeParse(previous.config) : null;
  const old = before?.success && previous?.secretEncrypted ? before.data : null;

  let idp: IdpMetadata | null = null;
  if (input.metadataXml) {
    try {
      idp = await parseIdpMetadata(input.metadataXml);
    } catch (error) {
      if (error instanceof SamlMetadataError) throw new SamlSettingsError("metadata_xml", error.message);
      throw error;
    }
  } else if (input.metadataUrl && deps.fetch && (input.refreshMetadata || input.metadataUrl !== old?.metadata_url)) {
    try {
      idp = await fetchIdpMetadata({ fetch: deps.fetch }, input.metadataUrl);
    } catch (error) {
      if (error instanceof SamlMetadataError) throw new SamlSettingsError("metadata_url", error.message);
      throw error;
    }
  }

  const entityId = idp?.entityId ?? input.idpEntityId ?? old?.idp_entity_id;
  if (!entityId) throw new SamlSettingsError("idp_entity_id", "Enter the identity provider's entity ID, or give its metadata");
  const ssoUrl = idp?.ssoUrl ?? input.ssoUrl ?? old?.sso_url;
  if (!ssoUrl) throw new SamlSettingsError("sso_url", "Enter the identity provider's single sign-on URL, or give its metadata");
  try {
    upstreamUrl(ssoUrl, "single sign-on URL");
  } catch (error) {
    throw new SamlSettingsError("sso_url", error instanceof Error ? error.message : "The single sign-on URL is not usable");
  }
  let certificates = idp?.certificates ?? null;
  if (!certificates && input.idpCertificates?.length) {
    certificates = input.idpCertificates.map((value) => {
      const pem = certificatePem(value);
      if (!pem) throw new SamlSettingsError("idp_certificate", "A signing certificate is not a valid X.509 certificate (paste its PEM or base64)");
      return pem;
    });
  }
  certificates ??= old?.idp_certificates ?? null;
  if (!certificates?.length) throw new SamlSettingsError("idp_certificate", "Give the identity provider's signing certificate, or its metadata");
  if (certificates.length > MAX_IDP_CERTIFICATES) throw new SamlSettingsError("idp_certificate", `At most ${MAX_IDP_CERTIFICATES} signing certificates (current and next)`);

  const attributes = presetMapping(input.attributePreset, input.attributes);
  // The SP key pair is made once (a connection that was SAML with its key keeps it).
  const newSpKey = old === null;
  let sp: { certificatePem: string; secretEncrypted: string };
  if (old) sp = { certificatePem: old.sp_certificate, secretEncrypted: previous!.secretEncrypted! };
  else {
    const pair = generateSpKeyPair(`Latchkey SAML ${connectionId}`, now);
    sp = { certificatePem: pair.certificatePem, secretEncrypted: encryptSecret(deps.masterKey, pair.privateKeyPem, connectionSecretPurpose(connectionId)) };
  }
  const parsed = samlConfigSchema.safeParse({
    idp_entity_id: entityId,
    sso_url: ssoUrl,
    idp_certificates: certificates,
    metadata_url: input.metadataUrl ?? null,
    sign_requests: input.signRequests,
    allow_sha1: input.allowSha1,
    name_id_format: input.nameIdFormat,
    attribute_preset: input.attributePreset,
    attributes,
    idp_initiated_client_id: input.idpInitiatedClientId ?? null,
    sp_certificate: sp.certificatePem,
  });
  if (!parsed.success) throw new SamlSettingsError("attributes", parsed.error.issues[0]?.message ?? "The settings are not valid");
  return { config: parsed.data, secretEncrypted: sp.secretEncrypted, newSpKey };
}

/** Records an accepted assertion's ID until `until`; false when it was recorded before (a replay). */
export async function firstUseOfAssertion(ctx: EndpointContext, connectionId: string, assertionId: string, until: Date): Promise<boolean> {
  const fresh = await ctx.service.db
    .insert(samlAssertionReplays)
    .values({ workspaceId: ctx.workspace.id, connectionId, assertionId, expiresAt: until })
    .onConflictDoNothing()
    .returning({ id: samlAssertionReplays.assertionId });
  return fresh.length === 1;
}

/** The SP metadata of this workspace's SAML connection `connectionId` under the request's issuer, or null (no such connection, or not set up). */
export async function spMetadataOf(ctx: EndpointContext, connectionId: string): Promise<string | null> {
  const [row] = await ctx.service.db
    .select({ config: enterpriseConnections.config })
    .from(enterpriseConnections)
    .where(and(eq(enterpriseConnections.workspaceId, ctx.workspace.id), eq(enterpriseConnections.id, connectionId), eq(enterpriseConnections.kind, "saml")))
    .limit(1);
  const config = row ? samlConfigSchema.safeParse(row.config) : null;
  return config?.success ? await spMetadata(ctx.issuer, connectionId, config.data) : null;
}

/**
 * Where a sign-in started at the identity provider goes when the connection names an application
 * for it: that application's home page (lib/uris.ts), where the user signs in as usual
 * (SP-initiated, bound to the browser). Nothing from the response is used, so nothing can be
 * replayed into a session. Null when the connection names none, or the application is gone,
 * disabled or has no home.
 */
export async function idpInitiatedDestination(ctx: EndpointContext, config: SamlConfig): Promise<{ clientId: string; url: string } | null> {
  if (!config.idp_initiated_client_id) return null;
  const [client] = await ctx.service.db
    .select({ clientId: clients.clientId, redirectUris: clients.redirectUris, homeUri: clients.homeUri, type: clients.type })
    .from(clients)
    .where(and(eq(clients.workspaceId, ctx.workspace.id), eq(clients.clientId, config.idp_initiated_client_id), eq(clients.active, true)))
    .limit(1);
  const url = client && client.type !== "M2M" ? applicationHome(client) : null;
  return url && client ? { clientId: client.clientId, url } : null;
}

/** A SAML connection's addresses as a service provider (entity ID, ACS, metadata), under the workspace's issuer: what the console shows. */
export function samlServiceProvider(service: Pick<Service, "config">, workspaceId: string, connectionId: string) {
  return samlEndpoints(issuerFor(service.config.publicUrl, workspaceId), connectionId);
}
