/**
 * A SAML identity provider for tests that need to say exactly what a response carries: it reads
 * the AuthnRequest our redirect carries and builds the Response by hand, signed with xml-crypto
 * (the assertion, the Response, both or neither; RSA-SHA256 or SHA-1; by its key or another),
 * optionally encrypted to the SP's certificate, with every condition overridable. The end-to-end
 * suite uses a real identity provider (SimpleSAMLphp); this one crafts what no real one would send.
 */
import { randomBytes } from "node:crypto";
import { inflateRawSync } from "node:zlib";
import { SignedXml } from "xml-crypto";
import { encrypt } from "xml-encryption";
import { generateSpKeyPair } from "../../../lib/federation/upstream/self-signed-certificate";

const RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
const SHA256 = "http://www.w3.org/2001/04/xmlenc#sha256";
const RSA_SHA1 = "http://www.w3.org/2000/09/xmldsig#rsa-sha1";
const SHA1 = "http://www.w3.org/2000/09/xmldsig#sha1";
const EXC_C14N = "http://www.w3.org/2001/10/xml-exc-c14n#";
const ENVELOPED = "http://www.w3.org/2000/09/xmldsig#enveloped-signature";
export const PERSISTENT = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent";
export const TRANSIENT = "urn:oasis:names:tc:SAML:2.0:nameid-format:transient";

export interface AuthnRequestSeen {
  id: string;
  acs: string;
  issuer: string;
  relayState: string | null;
  signed: boolean;
}

/** What the AuthnRequest redirect carried (HTTP-Redirect binding: deflated, base64). */
export function readAuthnRequest(url: URL): AuthnRequestSeen {
  const encoded = url.searchParams.get("SAMLRequest");
  if (!encoded) throw new Error(`no SAMLRequest in ${url.href}`);
  const xml = inflateRawSync(Buffer.from(encoded, "base64")).toString("utf8");
  const attr = (name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(xml)?.[1] ?? "";
  return {
    id: attr("ID"),
    acs: attr("AssertionConsumerServiceURL"),
    issuer: /<saml:Issuer[^>]*>([^<]*)</.exec(xml)?.[1] ?? "",
    relayState: url.searchParams.get("RelayState"),
    signed: url.searchParams.has("Signature"),
  };
}

export interface ResponseOptions {
  nameId: string;
  nameIdFormat?: string;
  attributes?: Record<string, string | string[]>;
  /** Defaults from the request: InResponseTo, Recipient, Destination are the request's; Audience its issuer. */
  inResponseTo?: string | null;
  recipient?: string;
  destination?: string | null;
  audience?: string;
  issuer?: string;
  /** Offsets from `now` in seconds. */
  notBefore?: number;
  notOnOrAfter?: number;
  confirmationNotOnOrAfter?: number;
  assertionId?: string;
  authnContextClassRef?: string;
  /** Which element is signed (default: the assertion). */
  sign?: "assertion" | "response" | "both" | "none";
  sha1?: boolean;
  /** Sign with this key pair instead of the identity provider's own. */
  signingKey?: { privateKeyPem: string; certificatePem: string };
  /** Encrypt the assertion to this certificate (the SP's), with RSA-OAEP and AES-256-GCM unless told otherwise. */
  encryptTo?: string;
  keyTransport?: string;
  cipher?: string;
  /** The top-level StatusCode (default Success). */
  status?: string;
  /** Turn the signed response into something else before it is posted. */
  tamper?: (xml: string) => string;
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const id = () => `_${randomBytes(16).toString("hex")}`;
const at = (now: Date, seconds: number) => new Date(now.getTime() + seconds * 1000).toISOString();

function sign(xml: string, element: "Assertion" | "Response", key: { privateKeyPem: string; certificatePem: string }, sha1: boolean): string {
  const sig = new SignedXml({ privateKey: key.privateKeyPem, publicCert: key.certificatePem, signatureAlgorithm: sha1 ? RSA_SHA1 : RSA_SHA256, canonicalizationAlgorithm: EXC_C14N });
  const target = `//*[local-name(.)='${element}']`;
  sig.addReference({ xpath: target, transforms: [ENVELOPED, EXC_C14N], digestAlgorithm: sha1 ? SHA1 : SHA256 });
  sig.computeSignature(xml, { location: { reference: `${target}/*[local-name(.)='Issuer']`, action: "after" } });
  return sig.getSignedXml();
}

function encryptTo(assertion: string, certificatePem: string, keyTransport?: string, cipher?: string): Promise<string> {
  return new Promise((resolve, reject) =>
    encrypt(
      assertion,
      {
        rsa_pub: certificatePem,
        pem: certificatePem,
        encryptionAlgorithm: (cipher ?? "http://www.w3.org/2009/xmlenc11#aes256-gcm") as Parameters<typeof encrypt>[1]["encryptionAlgorithm"],
        keyEncryptionAlgorithm: (keyTransport ?? "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p") as Parameters<typeof encrypt>[1]["keyEncryptionAlgorithm"],
        warnInsecureAlgorithm: false,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    ),
  );
}

export interface SamlIdpStandin {
  entityId: string;
  ssoUrl: string;
  certificatePem: string;
  privateKeyPem: string;
  /** The Response to `request` as the identity provider would POST it: base64 SAMLResponse and the RelayState. */
  respond(request: AuthnRequestSeen, options: ResponseOptions, now: Date): Promise<{ SAMLResponse: string; RelayState: string | null; xml: string }>;
}

export function samlIdpStandin(entityId = "https://idp.acme.test/saml"): SamlIdpStandin {
  const key = generateSpKeyPair("idp.acme.test", new Date("2026-01-01T00:00:00Z"));
  return {
    entityId,
    ssoUrl: "https://idp.acme.test/sso",
    ...key,
    async respond(request, o, now) {
      const issuer = o.issuer ?? entityId;
      const inResponseTo = o.inResponseTo === undefined ? request.id : o.inResponseTo;
      const destination = o.destination === undefined ? request.acs : o.destination;
      const attributes = Object.entries(o.attributes ?? {})
        .map(([name, values]) => `<saml:Attribute Name="${esc(name)}">${[values].flat().map((v) => `<saml:AttributeValue>${esc(v)}</saml:AttributeValue>`).join("")}</saml:Attribute>`)
        .join("");
      const assertion =
        `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${o.assertionId ?? id()}" Version="2.0" IssueInstant="${now.toISOString()}">` +
        `<saml:Issuer>${esc(issuer)}</saml:Issuer>` +
        `<saml:Subject><saml:NameID Format="${o.nameIdFormat ?? PERSISTENT}">${esc(o.nameId)}</saml:NameID>` +
        `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${at(now, o.confirmationNotOnOrAfter ?? 300)}" Recipient="${esc(o.recipient ?? request.acs)}"${inResponseTo === null ? "" : ` InResponseTo="${esc(inResponseTo)}"`}/></saml:SubjectConfirmation></saml:Subject>` +
        `<saml:Conditions NotBefore="${at(now, o.notBefore ?? -5)}" NotOnOrAfter="${at(now, o.notOnOrAfter ?? 300)}"><saml:AudienceRestriction><saml:Audience>${esc(o.audience ?? request.issuer)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
        `<saml:AuthnStatement AuthnInstant="${now.toISOString()}" SessionIndex="${id()}"><saml:AuthnContext><saml:AuthnContextClassRef>${esc(o.authnContextClassRef ?? "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport")}</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
        (attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : "") +
        `</saml:Assertion>`;
      const signer = o.signingKey ?? key;
      const mode = o.sign ?? "assertion";
      let signedAssertion = mode === "assertion" || mode === "both" ? sign(assertion, "Assertion", signer, !!o.sha1) : assertion;
      if (o.encryptTo) signedAssertion = `<saml:EncryptedAssertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">${await encryptTo(signedAssertion, o.encryptTo, o.keyTransport, o.cipher)}</saml:EncryptedAssertion>`;
      let xml =
        `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${id()}" Version="2.0" IssueInstant="${now.toISOString()}"` +
        `${destination === null ? "" : ` Destination="${esc(destination)}"`}${inResponseTo === null ? "" : ` InResponseTo="${esc(inResponseTo)}"`}>` +
        `<saml:Issuer>${esc(issuer)}</saml:Issuer><samlp:Status><samlp:StatusCode Value="${o.status ?? "urn:oasis:names:tc:SAML:2.0:status:Success"}"/></samlp:Status>${signedAssertion}</samlp:Response>`;
      if (mode === "response" || mode === "both") xml = sign(xml, "Response", signer, !!o.sha1);
      if (o.tamper) xml = o.tamper(xml);
      return { SAMLResponse: Buffer.from(xml, "utf8").toString("base64"), RelayState: request.relayState, xml };
    },
  };
}
