/**
 * SAML's XML, loaded on first use (lib/federation/upstream/saml-settings.ts says why): parsing
 * with xmldom under strict error handling, the identity provider's metadata read into settings,
 * and our SP metadata written by node-saml.
 */
import { certificatePem, MAX_IDP_CERTIFICATES, MAX_METADATA_BYTES, samlEndpoints, SAML_NAME_ID_FORMATS, type SamlConfig } from "./saml-settings";

/**
 * Parses XML, or returns the problems xmldom reported (any error or fatal error refuses the
 * document; nothing is logged). No external entity is ever resolved by xmldom.
 */
export async function parseXmlStrictly(xml: string): Promise<{ doc: Document } | { problems: string[] }> {
  const { DOMParser } = await import("@xmldom/xmldom");
  const problems: string[] = [];
  const doc = new DOMParser({
    errorHandler: (level: string, message: string) => {
      if (level !== "warning") problems.push(message);
    },
  }).parseFromString(xml, "application/xml") as unknown as Document | undefined;
  return problems.length || !doc?.documentElement ? { problems: problems.length ? problems : ["no document element"] } : { doc };
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
async function parseXml(xml: string): Promise<Document> {
  const parsed = await parseXmlStrictly(xml);
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
export async function parseIdpMetadata(xml: string): Promise<IdpMetadata> {
  if (Buffer.byteLength(xml, "utf8") > MAX_METADATA_BYTES) throw new SamlMetadataError(`The metadata is larger than ${MAX_METADATA_BYTES / 1024} KiB`);
  if (/<!DOCTYPE/i.test(xml)) throw new SamlMetadataError("The metadata must not contain a DOCTYPE");
  const doc = await parseXml(xml);
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

/** Our SP metadata for this connection: entity ID, ACS (HTTP-POST), the signing and encryption certificate, the NameID format, signed assertions wanted. */
export async function spMetadata(issuer: string, connectionId: string, config: Pick<SamlConfig, "sp_certificate" | "name_id_format" | "sign_requests">): Promise<string> {
  const { generateServiceProviderMetadata } = await import("@node-saml/node-saml");
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
