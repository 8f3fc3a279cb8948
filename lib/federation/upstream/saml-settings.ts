/**
 * A SAML connection's settings (enterprise_connections.config for kind "saml") and its addresses
 * as a service provider. Reading and writing XML (the identity provider's metadata, our SP
 * metadata, responses) is ./saml-xml.ts, loaded on first use: no SAML code or XML library is in
 * the server's heap until a SAML connection is used.
 *
 * The SP private key is the connection's secret (encrypted under the master key, never exported);
 * its self-signed certificate is here, published in the SP metadata.
 */
import { X509Certificate } from "node:crypto";
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
 * so an administrator picks the provider instead of typing URIs. `common` is the names most
 * providers' examples use (a new connection's default); `custom` keeps what is typed.
 */
export const SAML_ATTRIBUTE_PRESETS = {
  entra: { label: "Microsoft Entra ID", mapping: { email: `${CLAIMS}/emailaddress`, name: "http://schemas.microsoft.com/identity/claims/displayname", given_name: `${CLAIMS}/givenname`, family_name: `${CLAIMS}/surname` } },
  common: { label: "Common names (email, firstName, lastName)", mapping: { email: "email", name: null, given_name: "firstName", family_name: "lastName" } },
  okta: { label: "Okta", mapping: { email: "email", name: null, given_name: "firstName", family_name: "lastName" } },
  google: { label: "Google Workspace", mapping: { email: "email", name: null, given_name: "firstName", family_name: "lastName" } },
  adfs: { label: "AD FS", mapping: { email: `${CLAIMS}/emailaddress`, name: "http://schemas.xmlsoap.org/claims/CommonName", given_name: `${CLAIMS}/givenname`, family_name: `${CLAIMS}/surname` } },
} as const satisfies Record<string, { label: string; mapping: SamlAttributeMapping }>;
export type SamlAttributePreset = keyof typeof SAML_ATTRIBUTE_PRESETS | "custom";
export const SAML_ATTRIBUTE_PRESET_NAMES = ["common", "entra", "okta", "google", "adfs", "custom"] as const satisfies readonly SamlAttributePreset[];

/** Metadata larger than this is refused (a single identity provider's fits in a few kilobytes). */
export const MAX_METADATA_BYTES = 512 * 1024;

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
  /**
   * A sign-in started at the identity provider (an unsolicited response) is never accepted; with
   * this application's client id, the user is sent to its home page to sign in from there.
   */
  idp_initiated_client_id: z.string().max(128).nullable().default(null),
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

export { samlEndpoints, SAML_ACS_PATH, SAML_METADATA_PATH } from "./saml-endpoints";

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

/** The attribute mapping a preset stands for (`custom`: the one given, else email only). */
export function presetMapping(preset: SamlAttributePreset, custom?: Partial<SamlAttributeMapping>): SamlAttributeMapping {
  if (preset !== "custom") return { ...SAML_ATTRIBUTE_PRESETS[preset].mapping };
  return { email: custom?.email ?? "email", name: custom?.name ?? null, given_name: custom?.given_name ?? null, family_name: custom?.family_name ?? null };
}

