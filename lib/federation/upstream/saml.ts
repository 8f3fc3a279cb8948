/**
 * SAML 2.0 upstreams (an organization's SAML connection): SP-initiated Web Browser SSO, the
 * AuthnRequest by the HTTP-Redirect binding (signed when the connection asks), the Response by
 * HTTP-POST to the connection's ACS. Signatures and decryption are @node-saml/node-saml's
 * (xml-crypto, xml-encryption); what it leaves to its caller is checked here, against the
 * service clock:
 *
 * - a signed Response or a signed Assertion, by this connection's certificates only, and only the
 *   signed element read (node-saml: the verified bytes, one assertion, wrapping refused);
 * - no SHA-1 in any signature or digest unless the connection allows it (node-saml accepts it);
 * - a Success status (node-saml reads an assertion whatever the status), no RSA PKCS#1 v1.5 key
 *   transport or 3DES (xml-encryption decrypts them);
 * - `Issuer` is the identity provider's entity ID; `Audience` is this connection's SP entity ID;
 * - `Destination` (when sent) and the bearer confirmation's `Recipient` are this connection's ACS;
 * - `InResponseTo` (Response and confirmation) is the pending round trip's request ID;
 * - `NotBefore` / `NotOnOrAfter` of the conditions and the confirmation hold within the skew;
 * - a persistent (or other stable) NameID: a transient one cannot identify anyone twice.
 *
 * The assertion's ID comes back with its expiry so the caller records it once (replay store).
 */
import { randomBytes } from "node:crypto";
import type { CacheProvider } from "@node-saml/node-saml";
import { FederationError, type UpstreamCall, type UpstreamIdentity, type UpstreamProvider, type UpstreamStart } from "./contract";
import { receivedOf } from "./identity";
import { upstreamUrl } from "./transport";
import { SAML_NAME_ID_FORMATS, samlEndpoints, TRANSIENT_NAME_ID, type SamlProviderSettings } from "./saml-settings";
import { parseXmlStrictly } from "./saml-xml";

/** node-saml (xml-crypto, xml-encryption, xmldom), loaded with the first SAML round trip (./saml-settings.ts says why). */
const nodeSaml = () => import("@node-saml/node-saml");
// Its decryption helper (the module has no "exports" map, so the file is named as Node resolves it).
const nodeSamlXml = () => import("@node-saml/node-saml/lib/xml.js");

/** How far the identity provider's clock may be from ours, either way, for every time condition. */
export const SAML_CLOCK_SKEW_MS = 2 * 60 * 1000;
/** The largest SAMLResponse the ACS reads (form body): signed, encrypted responses with many group attributes fit. */
export const SAML_ACS_BODY_LIMIT = 256 * 1024;

const ASSERTION = "urn:oasis:names:tc:SAML:2.0:assertion";
const PROTOCOL = "urn:oasis:names:tc:SAML:2.0:protocol";
const DS = "http://www.w3.org/2000/09/xmldsig#";
const BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer";
const XENC = "http://www.w3.org/2001/04/xmlenc#";
const SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success";
const WEAK_ENCRYPTION = ["http://www.w3.org/2001/04/xmlenc#rsa-1_5", "http://www.w3.org/2001/04/xmlenc#tripledes-cbc"];
const SHA1 = ["http://www.w3.org/2000/09/xmldsig#rsa-sha1", "http://www.w3.org/2000/09/xmldsig#sha1", "http://www.w3.org/2000/09/xmldsig#dsa-sha1"];

/** AuthnContextClassRef values that mean more than one factor (counted only when the connection trusts its upstream's MFA). */
export const MFA_CONTEXT_CLASSES = [
  "http://schemas.microsoft.com/claims/multipleauthn",
  "https://refeds.org/profile/mfa",
  "urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract",
  "urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorUnregistered",
  "urn:oasis:names:tc:SAML:2.0:ac:classes:TimeSyncToken",
  "urn:oasis:names:tc:SAML:2.0:ac:classes:SmartcardPKI",
];

function settingsOf(provider: UpstreamProvider): SamlProviderSettings {
  if (!provider.saml) throw new FederationError("misconfigured", "The SAML connection has no settings");
  return provider.saml;
}

const invalid = (message: string, cause?: unknown) => new FederationError("invalid_response", message, cause === undefined ? undefined : { cause });

/** The AuthnRequest, as a redirect to the identity provider's SSO address, with a fresh RelayState (the round trip's state) and request ID. */
export async function beginSaml(provider: UpstreamProvider, call: UpstreamCall): Promise<UpstreamStart> {
  const { connectionId, config, spPrivateKey } = settingsOf(provider);
  const entryPoint = upstreamUrl(config.sso_url, "identity provider's single sign-on address").href;
  const endpoints = samlEndpoints(call.issuer, connectionId);
  const state = randomBytes(32).toString("base64url");
  // An xs:ID: it must not start with a digit.
  const requestId = `_${randomBytes(20).toString("hex")}`;
  const { SAML, ValidateInResponseTo } = await nodeSaml();
  const saml = new SAML({
    callbackUrl: endpoints.acs,
    issuer: endpoints.entityId,
    entryPoint,
    idpCert: config.idp_certificates,
    identifierFormat: SAML_NAME_ID_FORMATS[config.name_id_format],
    generateUniqueId: () => requestId,
    disableRequestedAuthnContext: true,
    validateInResponseTo: ValidateInResponseTo.never,
    ...(config.sign_requests ? { privateKey: spPrivateKey, signatureAlgorithm: "sha256" as const } : {}),
  });
  try {
    return { url: new URL(await saml.getAuthorizeUrlAsync(state, undefined, {})), state, nonce: null, codeVerifier: null, requestId };
  } catch (cause) {
    throw new FederationError("misconfigured", "The AuthnRequest could not be made from the connection's settings", { cause });
  }
}

/** node-saml's InResponseTo check, answered from the round trip: only its request ID is known. */
function expecting(requestId: string): CacheProvider {
  return {
    getAsync: async (key) => (key === requestId ? new Date().toISOString() : null),
    saveAsync: async () => null,
    removeAsync: async () => null,
  };
}

async function parse(xml: string, what: string): Promise<Document> {
  const parsed = await parseXmlStrictly(xml);
  if (!("doc" in parsed)) throw invalid(`The ${what} is not well-formed XML`);
  return parsed.doc;
}

const elements = (node: { getElementsByTagNameNS(ns: string, name: string): unknown }, ns: string, name: string): Element[] =>
  Array.from(node.getElementsByTagNameNS(ns, name) as ArrayLike<Element>);
const first = (node: Element, ns: string, name: string) => elements(node, ns, name)[0] ?? null;

/**
 * The algorithms a document's XML signatures use: each SignedInfo's SignatureMethod and its
 * References' DigestMethod (not the DigestMethod of an encrypted key's RSA-OAEP, which is not a signature).
 */
function signatureAlgorithms(doc: { getElementsByTagNameNS(ns: string, name: string): unknown }): string[] {
  const parent = (e: Element) => e.parentNode as Element | null;
  const signed = elements(doc, DS, "SignatureMethod").filter((e) => parent(e)?.localName === "SignedInfo");
  const digests = elements(doc, DS, "DigestMethod").filter((e) => parent(e)?.localName === "Reference" && parent(e)?.namespaceURI === DS);
  return [...signed, ...digests].map((e) => e.getAttribute("Algorithm") ?? "");
}

function instant(value: string | null, what: string): number | null {
  // xmldom answers "" for an absent attribute.
  if (!value) return null;
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw invalid(`${what} is not a time`);
  return at;
}

/** `NotBefore` / `NotOnOrAfter` of one element, against the service clock with the skew either way; returns NotOnOrAfter. */
function checkWindow(element: Element, now: number, what: string): number | null {
  const notBefore = instant(element.getAttribute("NotBefore"), `${what} NotBefore`);
  const notOnOrAfter = instant(element.getAttribute("NotOnOrAfter"), `${what} NotOnOrAfter`);
  if (notBefore !== null && now + SAML_CLOCK_SKEW_MS < notBefore) throw invalid(`${what} is not yet valid (NotBefore ${element.getAttribute("NotBefore")})`);
  if (notOnOrAfter !== null && now - SAML_CLOCK_SKEW_MS >= notOnOrAfter) throw invalid(`${what} has expired (NotOnOrAfter ${element.getAttribute("NotOnOrAfter")})`);
  return notOnOrAfter;
}

function attributeValues(assertion: Element): Map<string, string[]> {
  const values = new Map<string, string[]>();
  for (const attribute of elements(assertion, ASSERTION, "Attribute")) {
    const name = attribute.getAttribute("Name");
    if (!name) continue;
    const list = elements(attribute, ASSERTION, "AttributeValue").map((v) => (v.textContent ?? "").trim()).filter(Boolean);
    values.set(name, [...(values.get(name) ?? []), ...list]);
  }
  return values;
}

export interface SamlAssertionResult {
  identity: UpstreamIdentity;
  /** The assertion's ID and until when a replay of it must be refused. */
  assertionId: string;
  replayUntil: Date;
}

type Endpoints = ReturnType<typeof samlEndpoints>;
type XmlDocument = Document;
type XmlElement = Element;

/** The POSTed SAMLResponse as a parsed document whose root is a SAML Response. */
async function responseDocument(samlResponse: string): Promise<{ doc: XmlDocument; root: XmlElement }> {
  if (!/^[A-Za-z0-9+/=\s]+$/.test(samlResponse)) throw invalid("SAMLResponse is not base64");
  const xml = Buffer.from(samlResponse, "base64").toString("utf8");
  // No document type (entity expansion); nothing legitimate carries one.
  if (/<!DOCTYPE/i.test(xml)) throw invalid("The response carries a DOCTYPE");
  const doc = await parse(xml, "response");
  const root = doc.documentElement!;
  if (root.namespaceURI !== PROTOCOL || root.localName !== "Response") throw invalid("The message is not a SAML Response");
  return { doc, root };
}

/** SHA-1 anywhere (the encrypted assertion's own signature included) is refused, unless allowed for a legacy provider. */
async function refuseSha1(doc: XmlDocument, config: SamlProviderSettings["config"], spPrivateKey: string): Promise<void> {
  if (config.allow_sha1) return;
  const used = signatureAlgorithms(doc);
  const encrypted = elements(doc, ASSERTION, "EncryptedAssertion")[0];
  if (encrypted) {
    try {
      const { decryptXml } = await nodeSamlXml();
      used.push(...signatureAlgorithms(await parse(await decryptXml(encrypted.toString(), spPrivateKey), "encrypted assertion")));
    } catch (cause) {
      throw cause instanceof FederationError ? cause : invalid("The encrypted assertion could not be decrypted with this connection's key", cause);
    }
  }
  if (used.some((algorithm) => SHA1.includes(algorithm))) throw invalid("The response is signed with SHA-1, which this connection does not allow");
}

/** What node-saml leaves to us about the Response itself: a Success status, no weak encryption, our ACS as its Destination. */
function checkResponse(doc: XmlDocument, root: XmlElement, endpoints: Endpoints): void {
  // node-saml reads an assertion whatever the status says; only a successful response signs anyone in.
  const status = first(root, PROTOCOL, "StatusCode");
  if (status?.getAttribute("Value") !== SUCCESS) throw new FederationError("upstream_denied", `The identity provider answered with status ${status?.getAttribute("Value") || "missing"}`);
  // Key transport and ciphers with known breaks (RSA PKCS#1 v1.5, 3DES) are refused; node-saml would decrypt them.
  const ciphers = elements(doc, XENC, "EncryptionMethod").map((e) => e.getAttribute("Algorithm") ?? "");
  const weak = ciphers.find((algorithm) => WEAK_ENCRYPTION.includes(algorithm));
  if (weak) throw invalid(`The assertion is encrypted with ${weak}, which is not accepted (use RSA-OAEP and AES)`);

  const destination = root.getAttribute("Destination");
  if (destination && destination !== endpoints.acs) throw invalid(`Destination is ${destination}, not this connection's ACS`);
}

/** node-saml's verification (signature by this connection's certificates, decryption, InResponseTo, audience): the signed assertion's bytes. */
async function verifiedAssertionXml(settings: SamlProviderSettings, endpoints: Endpoints, input: { samlResponse: string; requestId: string }): Promise<string> {
  const { SAML, SamlStatusError, ValidateInResponseTo } = await nodeSaml();
  const saml = new SAML({
    callbackUrl: endpoints.acs,
    issuer: endpoints.entityId,
    audience: endpoints.entityId,
    idpCert: settings.config.idp_certificates,
    // A signed Response or a signed Assertion (node-saml refuses an assertion covered by neither).
    wantAuthnResponseSigned: false,
    wantAssertionsSigned: false,
    decryptionPvk: settings.spPrivateKey,
    validateInResponseTo: ValidateInResponseTo.always,
    cacheProvider: expecting(input.requestId),
    requestIdExpirationPeriodMs: 24 * 60 * 60 * 1000,
    // Time conditions are checked below against the service clock.
    acceptedClockSkewMs: -1,
  });
  try {
    const { profile } = await saml.validatePostResponseAsync({ SAMLResponse: input.samlResponse });
    if (!profile?.getAssertionXml) throw new Error("The response carries no assertion");
    return profile.getAssertionXml();
  } catch (cause) {
    if (cause instanceof SamlStatusError) throw new FederationError("upstream_denied", `The identity provider answered: ${cause.message}`, { cause });
    throw invalid(`The response failed verification: ${cause instanceof Error ? cause.message : "unknown"}`, cause);
  }
}

/** The assertion's stable NameID (its value and format): a transient one cannot identify anyone twice. */
function nameIdOf(subject: XmlElement | null): { value: string; format: string | null } {
  const nameId = subject ? first(subject, ASSERTION, "NameID") : null;
  const value = nameId?.textContent?.trim();
  if (!nameId || !value || value.length > 512) throw invalid("The assertion has no NameID");
  const format = nameId.getAttribute("Format");
  if (format === TRANSIENT_NAME_ID) throw invalid("The NameID is transient: ask the identity provider for a persistent NameID");
  return { value, format };
}

/** The bearer confirmation for our ACS and this request, within its time window: until when it holds. */
function confirmationEnd(subject: XmlElement | null, endpoints: Endpoints, requestId: string, now: number): number {
  const confirmation = subject ? elements(subject, ASSERTION, "SubjectConfirmation").find((c) => c.getAttribute("Method") === BEARER) : undefined;
  const data = confirmation ? first(confirmation, ASSERTION, "SubjectConfirmationData") : null;
  if (!data) throw invalid("The assertion has no bearer subject confirmation");
  if (data.getAttribute("Recipient") !== endpoints.acs) throw invalid(`Recipient is ${data.getAttribute("Recipient") ?? "missing"}, not this connection's ACS`);
  if (data.getAttribute("InResponseTo") !== requestId) throw invalid("The subject confirmation answers another request (InResponseTo)");
  const end = checkWindow(data, now, "The subject confirmation");
  if (end === null) throw invalid("The subject confirmation has no NotOnOrAfter");
  return end;
}

/** The user's identity from the assertion's attributes, as the connection maps them. */
function identityOf(assertion: XmlElement, config: SamlProviderSettings["config"], nameId: { value: string; format: string | null }): UpstreamIdentity {
  const attributes = attributeValues(assertion);
  const value = (name: string | null) => (name ? (attributes.get(name)?.[0] ?? null) : null);
  let email = value(config.attributes.email);
  if (!email && nameId.format === SAML_NAME_ID_FORMATS.emailAddress) email = nameId.value;
  if (email && (email.length > 320 || !email.includes("@"))) email = null;
  const name = value(config.attributes.name) ?? ([value(config.attributes.given_name), value(config.attributes.family_name)].filter(Boolean).join(" ") || null);
  const classRef = first(assertion, ASSERTION, "AuthnContextClassRef")?.textContent?.trim() ?? null;
  return {
    issuer: config.idp_entity_id,
    subject: nameId.value,
    email,
    // SAML has no email_verified: the connection's admission rule decides (lib/federation/identities.ts).
    emailVerified: false,
    name: name ? name.slice(0, 200) : null,
    amr: classRef && MFA_CONTEXT_CLASSES.includes(classRef) ? ["mfa"] : [],
    acr: classRef,
    received: receivedOf("Assertion", [
      [nameId.format ? `NameID (${nameId.format})` : "NameID", nameId.value],
      ...attributes,
      ["AuthnContextClassRef", classRef ?? undefined],
    ]),
  };
}

/**
 * Verifies a POSTed SAMLResponse for the round trip that sent `requestId`; the identity it
 * asserts, or a FederationError naming the condition that failed (for the console; the user
 * sees the catalogue's page). The steps run in this order, each throwing at the first failure.
 */
export async function completeSaml(provider: UpstreamProvider, call: UpstreamCall, input: { samlResponse: string; requestId: string }): Promise<SamlAssertionResult> {
  const settings = settingsOf(provider);
  const { config } = settings;
  const endpoints = samlEndpoints(call.issuer, settings.connectionId);
  const now = call.now.getTime();

  const { doc, root } = await responseDocument(input.samlResponse);
  // The weak ciphers are refused before anything is decrypted (RSA PKCS#1 v1.5 is not even tried).
  checkResponse(doc, root, endpoints);
  await refuseSha1(doc, config, settings.spPrivateKey);
  const assertionXml = await verifiedAssertionXml(settings, endpoints, input);

  // Only the signed assertion (node-saml's verified bytes) is read from here on.
  const assertion = (await parse(assertionXml, "assertion")).documentElement!;
  const assertionId = assertion.getAttribute("ID");
  if (!assertionId || assertionId.length > 256) throw invalid("The assertion has no usable ID");
  const issuer = first(assertion, ASSERTION, "Issuer")?.textContent?.trim();
  if (issuer !== config.idp_entity_id) throw invalid(`The assertion's Issuer is ${issuer ?? "missing"}, not the identity provider ${config.idp_entity_id}`);
  const subject = first(assertion, ASSERTION, "Subject");
  const nameId = nameIdOf(subject);
  const confirmedUntil = confirmationEnd(subject, endpoints, input.requestId, now);
  const conditions = first(assertion, ASSERTION, "Conditions");
  const conditionsEnd = conditions ? checkWindow(conditions, now, "The assertion") : null;

  return {
    identity: identityOf(assertion, config, nameId),
    assertionId,
    replayUntil: new Date(Math.max(confirmedUntil, conditionsEnd ?? 0) + SAML_CLOCK_SKEW_MS),
  };
}
