/**
 * A SAML connection's settings (enterprise_connections.config for kind "saml"), its addresses as
 * a service provider, the identity provider's metadata read into settings, and our SP metadata.
 *
 * The SP private key is the connection's secret (encrypted under the master key, never exported);
 * its self-signed certificate is here, published in the SP metadata.
 */
import { X509Certificate } from "node:crypto";
import { DOMParser } from "@xmldom/xmldom";
import { generateServiceProviderMetadata } from "@node-saml/node-saml";
import { z } from "zod";

export const SAML_NAME_ID_FORMATS = {
  persistent: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
  emailAddress: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
  unspecified: "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified",
} as const;
export type SamlNameIdFormat = keyof typeof SAML_NAME_ID_FORMATS;
export const TRANSIENT_NAME_ID = "urn:oasis:names:tc:SAML:2.0:nameid-format:transient";

/** Which assertion attributes carry the user's email and name. */
export interface SamlAttributeMapping {
  email: string;
  name: string | null;
  given_name: string | null;
  family_name: string | null;
}

const CLAIMS = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims";
/**
 * The attribute names each identity provider sends by default (or documents as its example),
 * so an administrator picks the provider instead of typing URIs. `custom` keeps what is typed.
 */
export const SAML_ATTRIBUTE_PRESETS = {
  entra: { label: "Microsoft Entra ID", mapping: { email: `${CLAIMS}/emailaddress`, name: "http://schemas.microsoft.com/identity/claims/displayname", given_name: `${CLAIMS}/givenname`, family_name: `${CLAIMS}/surname` } },
  okta: { label: "Okta", mapping: { email: "email", name: null, given_name: "firstName", family_name: "lastName" } },
  google: { label: "Google Workspace", mapping: { email: "email", name: null, given_name: "firstName", family_name: "lastName" } },
  adfs: { label: "AD FS", mapping: { email: `${CLAIMS}/emailaddress`, name: "http://schemas.xmlsoap.org/claims/CommonName", given_name: `${CLAIMS}/givenname`, family_name: `${CLAIMS}/surname` } },
} as const satisfies Record<string, { label: string; mapping: SamlAttributeMapping }>;
export type SamlAttributePreset = keyof typeof SAML_ATTRIBUTE_PRESETS | "custom";
export const SAML_ATTRIBUTE_PRESET_NAMES = ["entra", "okta", "google", "adfs", "custom"] as const satisfies readonly SamlAttributePreset[];

/** At most two identity-provider signing certificates: the current one and the next, for rotation. */
export const MAX_IDP_CERTIFICATES = 2;

const attributeName = z.string().trim().min(1).max(512);
export const samlConfigSchema = z.object({
  idp_entity_id: z.string().trim().min(1).max(1024),
  sso_url: z.string().url().max(2048),
  idp_certificates: z.array(z.string().max(16_384)).min(1).max(MAX_IDP_CERTIFICATES),
  metadata_url: z.string().url().max(2048).nullable().default(null),
  /** Sign the AuthnRequest (HTTP-Redirect binding's `Signature`), for identity providers that ask for it. */
  sign_requests: z.boolean().default(false),
  /** Accept RSA-SHA1 signatures and SHA-1 digests: for a legacy identity provider only, audited and shown as a warning. */
  allow_sha1: z.boolean().default(false),
  name_id_format: z.enum(Object.keys(SAML_NAME_ID_FORMATS) as [SamlNameIdFormat, ...SamlNameIdFormat[]]).default("persistent"),
  attribute_preset: z.enum(SAML_ATTRIBUTE_PRESET_NAMES).default("custom"),
  attributes: z.object({ email: attributeName, name: attributeName.nullable().default(null), given_name: attributeName.nullable().default(null), family_name: attributeName.nullable().default(null) }),
  /** This connection's SP certificate (public; its private key is the connection's encrypted secret). */
  sp_certificate: z.string().max(16_384),
});
export type SamlConfig = z.infer<typeof samlConfigSchema>;

/** What a SAML provider carries besides the upstream contract's fields: its settings and, decrypted, the SP private key. */
export interface SamlProviderSettings {
  connectionId: string;
  config: SamlConfig;
  spPrivateKey: string;
}

/**
 * This connection's addresses as a service provider, under the issuer the request came to. The
 * entity ID is the metadata's own address (it answers with the SP metadata).
 */
export function samlEndpoints(issuer: string, connectionId: string): { entityId: string; acs: string; metadata: string } {
  const query = `?connection=${encodeURIComponent(connectionId)}`;
  return { entityId: `${issuer}${SAML_METADATA_PATH}${query}`, acs: `${issuer}${SAML_ACS_PATH}${query}`, metadata: `${issuer}${SAML_METADATA_PATH}${query}` };
}
export const SAML_ACS_PATH = "/federation/saml/acs";
export const SAML_METADATA_PATH = "/federation/saml/metadata";

/** A certificate setting as PEM (accepts PEM or the bare base64 of metadata), or null when it is not an X.509 certificate. */
export function certificatePem(value: string): string | null {
  const trimmed = value.trim();
  const body = trimmed.includes("-----BEGIN") ? trimmed : `-----BEGIN CERTIFICATE-----\n${trimmed.replace(/\s+/g, "")}\n-----END CERTIFICATE-----`;
  try {
    return new X509Certificate(body).toString();
  } catch {
    return null;
  }
}

export class SamlMetadataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SamlMetadataError";
  }
}

const MD = "urn:oasis:names:tc:SAML:2.0:metadata";
const DS = "http://www.w3.org/2000/09/xmldsig#";
const REDIRECT_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";
/** Metadata larger than this is refused (a single identity provider's fits in a few kilobytes). */
export const MAX_METADATA_BYTES = 512 * 1024;

/**
 * Parses XML, or returns the problems xmldom reported (any error or fatal error refuses the
 * document; nothing is logged). No external entity is ever resolved by xmldom.
 */
export function parseXmlStrictly(xml: string): { doc: Document } | { problems: string[] } {
  const problems: string[] = [];
  const doc = new DOMParser({
    errorHandler: (level: string, message: string) => {
      if (level !== "warning") problems.push(message);
    },
  }).parseFromString(xml, "application/xml") as unknown as Document | undefined;
  return problems.length || !doc?.documentElement ? { problems: problems.length ? problems : ["no document element"] } : { doc };
}

function parseXml(xml: string): Document {
  const parsed = parseXmlStrictly(xml);
  if (!("doc" in parsed)) throw new SamlMetadataError("The metadata is not well-formed XML");
  return parsed.doc;
}

const children = (element: Element, ns: string, name: string): Element[] =>
  Array.from(element.getElementsByTagNameNS(ns, name) as unknown as ArrayLike<Element>).filter((e) => e.parentNode === element);

/** What the identity provider's metadata says: its entity ID, its HTTP-Redirect SSO address and its signing certificates. */
export interface IdpMetadata {
  entityId: string;
  ssoUrl: string;
  certificates: string[];
}

/**
 * Reads an identity provider's SAML metadata (one EntityDescriptor with an IDPSSODescriptor, or
 * an EntitiesDescriptor holding exactly one). The document's own signature is not checked: an
 * administrator pasted it or it came over https from the address they gave.
 */
export function parseIdpMetadata(xml: string): IdpMetadata {
  if (Buffer.byteLength(xml, "utf8") > MAX_METADATA_BYTES) throw new SamlMetadataError(`The metadata is larger than ${MAX_METADATA_BYTES / 1024} KiB`);
  if (/<!DOCTYPE/i.test(xml)) throw new SamlMetadataError("The metadata must not contain a DOCTYPE");
  const doc = parseXml(xml);
  const entities = Array.from(doc.getElementsByTagNameNS(MD, "EntityDescriptor") as unknown as ArrayLike<Element>).filter((e) => e.getElementsByTagNameNS(MD, "IDPSSODescriptor").length > 0);
  if (entities.length !== 1) throw new SamlMetadataError(entities.length ? "The metadata describes several identity providers: paste the one to use" : "The metadata describes no SAML identity provider (IDPSSODescriptor)");
  const entity = entities[0]!;
  const entityId = entity.getAttribute("entityID")?.trim();
  if (!entityId) throw new SamlMetadataError("The identity provider has no entityID");
  const idp = children(entity, MD, "IDPSSODescriptor")[0];
  if (!idp) throw new SamlMetadataError("The metadata describes no SAML identity provider (IDPSSODescriptor)");
  const sso = children(idp, MD, "SingleSignOnService").find((e) => e.getAttribute("Binding") === REDIRECT_BINDING);
  const ssoUrl = sso?.getAttribute("Location")?.trim();
  if (!ssoUrl) throw new SamlMetadataError("The identity provider offers no single sign-on address for the HTTP-Redirect binding");
  const certificates: string[] = [];
  for (const key of children(idp, MD, "KeyDescriptor")) {
    const use = key.getAttribute("use");
    if (use && use !== "signing") continue;
    for (const cert of Array.from(key.getElementsByTagNameNS(DS, "X509Certificate") as unknown as ArrayLike<Element>)) {
      const pem = certificatePem(cert.textContent ?? "");
      if (!pem) throw new SamlMetadataError("A signing certificate in the metadata is not a valid X.509 certificate");
      if (!certificates.includes(pem)) certificates.push(pem);
    }
  }
  if (certificates.length === 0) throw new SamlMetadataError("The metadata has no signing certificate");
  if (certificates.length > MAX_IDP_CERTIFICATES) throw new SamlMetadataError(`The metadata has ${certificates.length} signing certificates; at most ${MAX_IDP_CERTIFICATES} are kept (current and next)`);
  return { entityId, ssoUrl, certificates };
}

/** The attribute mapping a preset stands for (`custom`: the one given, else email only). */
export function presetMapping(preset: SamlAttributePreset, custom?: Partial<SamlAttributeMapping>): SamlAttributeMapping {
  if (preset !== "custom") return { ...SAML_ATTRIBUTE_PRESETS[preset].mapping };
  return { email: custom?.email ?? "email", name: custom?.name ?? null, given_name: custom?.given_name ?? null, family_name: custom?.family_name ?? null };
}

/** Our SP metadata for this connection: entity ID, ACS (HTTP-POST), the signing and encryption certificate, the NameID format, signed assertions wanted. */
export function spMetadata(issuer: string, connectionId: string, config: Pick<SamlConfig, "sp_certificate" | "name_id_format" | "sign_requests">): string {
  const endpoints = samlEndpoints(issuer, connectionId);
  // node-saml writes the signing KeyDescriptor only when it has a private key; the metadata itself
  // is not signed, so a placeholder stands in (never used to sign anything).
  return generateServiceProviderMetadata({
    issuer: endpoints.entityId,
    callbackUrl: endpoints.acs,
    identifierFormat: SAML_NAME_ID_FORMATS[config.name_id_format],
    wantAssertionsSigned: true,
    decryptionPvk: "unused",
    decryptionCert: config.sp_certificate,
    ...(config.sign_requests ? { privateKey: "unused", publicCerts: [config.sp_certificate] } : {}),
    signMetadata: false,
  });
}
