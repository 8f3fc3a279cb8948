/**
 * The identity provider's metadata as an administrator gives it (pasted, or fetched from its URL):
 * what is read from it, and every document refused with the reason the console's form shows.
 */
import { describe, expect, it } from "vitest";
import { MAX_METADATA_BYTES } from "./saml-settings";
import { parseIdpMetadata, SamlMetadataError } from "./saml-xml";
import { generateSpKeyPair } from "./self-signed-certificate";

const NOW = new Date("2026-11-21T12:00:00Z");
const current = generateSpKeyPair("idp current", NOW).certificatePem;
const next = generateSpKeyPair("idp next", NOW).certificatePem;
const third = generateSpKeyPair("idp third", NOW).certificatePem;
const body = (pem: string) => pem.replace(/-----[^-]+-----|\s/g, "");

const REDIRECT = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";
const POST = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST";
const key = (pem: string, use?: string) =>
  `<md:KeyDescriptor${use ? ` use="${use}"` : ""}><ds:KeyInfo><ds:X509Data><ds:X509Certificate>\n  ${body(pem)}\n</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;
const sso = (binding: string, location: string) => `<md:SingleSignOnService Binding="${binding}" Location="${location}"/>`;
const idp = (entityId: string, inner: string) =>
  `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}"><md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">${inner}</md:IDPSSODescriptor></md:EntityDescriptor>`;
const typical = idp("https://idp.example/saml", `${key(current, "signing")}${sso(POST, "https://idp.example/sso/post")}${sso(REDIRECT, "https://idp.example/sso/redirect")}`);

async function refusal(xml: string): Promise<string> {
  const error = await parseIdpMetadata(xml).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SamlMetadataError);
  return (error as Error).message;
}

describe("the identity provider's metadata", () => {
  it("gives the entity ID, the HTTP-Redirect single sign-on URL and the signing certificate as PEM", async () => {
    expect(await parseIdpMetadata(typical)).toEqual({ entityId: "https://idp.example/saml", ssoUrl: "https://idp.example/sso/redirect", certificates: [current] });
  });

  it("reads the default namespace as well as a prefix, and an EntitiesDescriptor holding one identity provider beside service providers", async () => {
    const unprefixed = `<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://plain.example/"><IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><KeyDescriptor><KeyInfo xmlns="http://www.w3.org/2000/09/xmldsig#"><X509Data><X509Certificate>${body(current)}</X509Certificate></X509Data></KeyInfo></KeyDescriptor><SingleSignOnService Binding="${REDIRECT}" Location="https://plain.example/sso"/></IDPSSODescriptor></EntityDescriptor>`;
    expect(await parseIdpMetadata(unprefixed)).toMatchObject({ entityId: "https://plain.example/", certificates: [current] });
    const sp = `<md:EntityDescriptor entityID="https://sp.example/"><md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/></md:EntityDescriptor>`;
    const group = `<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata">${sp}${typical.replace(/ xmlns:md="[^"]+"/, "")}</md:EntitiesDescriptor>`.replace("<md:EntitiesDescriptor", `<md:EntitiesDescriptor xmlns:ds="http://www.w3.org/2000/09/xmldsig#"`);
    expect(await parseIdpMetadata(group)).toMatchObject({ entityId: "https://idp.example/saml" });
  });

  it("keeps signing certificates (and those with no use), current and next, once each; encryption keys are not signing keys", async () => {
    const xml = idp("https://idp.example/", `${key(current, "signing")}${key(third, "encryption")}${key(next)}${key(current)}${sso(REDIRECT, "https://idp.example/sso")}`);
    expect((await parseIdpMetadata(xml)).certificates).toEqual([current, next]);
  });

  it.each([
    ["a DOCTYPE with entities (billion laughs)", `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>${typical.replace("https://idp.example/saml", "&lol2;")}`, /DOCTYPE/],
    ["an external entity", `<!DOCTYPE md [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${typical.replace("https://idp.example/saml", "&xxe;")}`, /DOCTYPE/],
    ["a lower-case doctype", `<!doctype md>${typical}`, /DOCTYPE/],
    ["XML that is not well-formed", typical.slice(0, -10), /not well-formed/],
    ["text that is not XML", "https://idp.example/metadata", /not well-formed/],
    ["an undeclared entity", typical.replace("https://idp.example/saml", "&undeclared;"), /not well-formed|entityID/],
    ["a service provider's metadata", typical.replace(/IDPSSODescriptor/g, "SPSSODescriptor"), /no SAML identity provider/],
    ["two identity providers", `<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#">${typical}${typical.replace("idp.example/saml", "other.example/saml")}</md:EntitiesDescriptor>`, /several identity providers/],
    ["an identity provider without entityID", typical.replace(' entityID="https://idp.example/saml"', ""), /no entityID/],
    ["single sign-on by HTTP-POST only (requests are sent by redirect)", idp("https://idp.example/", `${key(current)}${sso(POST, "https://idp.example/sso")}`), /HTTP-Redirect/],
    ["no signing certificate", idp("https://idp.example/", `${key(current, "encryption")}${sso(REDIRECT, "https://idp.example/sso")}`), /no signing certificate/],
    ["a certificate that is not one", idp("https://idp.example/", `${key(current).replace(body(current), "bm90IGEgY2VydGlmaWNhdGU=")}${sso(REDIRECT, "https://idp.example/sso")}`), /not a valid X\.509/],
    ["three signing certificates", idp("https://idp.example/", `${key(current)}${key(next)}${key(third)}${sso(REDIRECT, "https://idp.example/sso")}`), /at most 2/],
  ])("refuses %s", async (_what, xml, reason) => {
    expect(await refusal(xml)).toMatch(reason);
  });

  it("refuses a document over the size bound before parsing it", async () => {
    const padded = typical.replace("</md:IDPSSODescriptor>", `<!--${"x".repeat(MAX_METADATA_BYTES)}--></md:IDPSSODescriptor>`);
    expect(await refusal(padded)).toMatch(/larger than 512 KiB/);
  });
});
