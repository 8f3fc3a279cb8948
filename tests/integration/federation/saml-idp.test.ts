/**
 * SAML 2.0 Web Browser SSO against a real identity provider (SimpleSAMLphp, e2e/saml-idp.ts),
 * validated by @node-saml/node-saml under a strict configuration: the AuthnRequest sent by
 * HTTP-Redirect, the user signing in at the IdP's own form, the Response posted back and checked
 * (signature with this IdP's certificate only, audience, InResponseTo consumed once, timestamps),
 * with encrypted assertions, and what node-saml leaves to the SP (SHA-1, Destination, Recipient).
 *
 * Skipped, with the reason printed, where PHP or SimpleSAMLphp is missing; in CI (.ci/run installs
 * them) a missing package fails instead.
 */
import { existsSync } from "node:fs";
import { inflateRawSync } from "node:zlib";
import { SAML, ValidateInResponseTo, type CacheProvider, type Profile, type SamlConfig } from "@node-saml/node-saml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { samlIdpMissing, selfSignedCertificate, startSamlIdp, type SamlIdp, type SamlIdpOptions, type SamlPost } from "../../../e2e/saml-idp";

const SP_ENTITY_ID = "https://auth.example.test/t/acme/saml/metadata";
const ACS_URL = "https://auth.example.test/t/acme/saml/acs";
const PERSISTENT = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent";
const EMAIL_ADDRESS = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";
const CLAIMS = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims";
const SHA1_SIGNATURE = "http://www.w3.org/2000/09/xmldsig#rsa-sha1";
const SHA1_DIGEST = "http://www.w3.org/2000/09/xmldsig#sha1";

const ALICE = {
  username: "alice",
  password: "correct horse",
  attributes: {
    [`${CLAIMS}/emailaddress`]: ["alice@acme.test"],
    [`${CLAIMS}/name`]: ["Alice Example"],
    "http://schemas.microsoft.com/ws/2008/06/identity/claims/groups": ["engineering", "admins"],
  },
};

const ci = !!process.env.CI && process.env.CI !== "0" && process.env.CI !== "false";
const missing = samlIdpMissing();
if (missing) {
  // .ci/run installs the packages wherever apt-get exists: there, their absence is a failure.
  if (ci && existsSync("/usr/bin/apt-get")) throw new Error(`the SAML test IdP needs ${missing}`);
  console.log(`[saml-idp] skipped here, missing ${missing}`);
}

/** The parts of node-saml's parsed assertion (xml2js, prefixes stripped) these tests read. */
interface SignedAssertion {
  Issuer: { _: string }[];
  Subject: { SubjectConfirmation: { $: { Method: string }; SubjectConfirmationData: { $: { Recipient?: string; InResponseTo?: string } }[] }[] }[];
}

/** The SP's outstanding AuthnRequest IDs, shared by the SAML instances of a test (node-saml's CacheProvider). */
function requestStore(): CacheProvider {
  const entries = new Map<string, string>();
  return {
    saveAsync: async (key, value) => {
      if (entries.has(key)) return null;
      entries.set(key, value);
      return { value, createdAt: Date.now() };
    },
    getAsync: async (key) => entries.get(key) ?? null,
    removeAsync: async (key) => (key !== null && entries.delete(key) ? key : null),
  };
}

/** The strict configuration an SP uses for one IdP: every option node-saml checks a response with. */
function strictSp(idp: SamlIdp, cacheProvider: CacheProvider, overrides: Partial<SamlConfig> = {}): SAML {
  return new SAML({
    entryPoint: idp.ssoUrl,
    issuer: SP_ENTITY_ID,
    callbackUrl: ACS_URL,
    audience: SP_ENTITY_ID,
    idpCert: idp.certificatePem,
    wantAssertionsSigned: true,
    // The IdP signs the assertion, not the Response (as Entra ID does by default).
    wantAuthnResponseSigned: false,
    signatureAlgorithm: "sha256",
    acceptedClockSkewMs: 5_000,
    maxAssertionAgeMs: 10 * 60_000,
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: 10 * 60_000,
    cacheProvider,
    identifierFormat: PERSISTENT,
    disableRequestedAuthnContext: true,
    ...overrides,
  });
}

/** The AuthnRequest inside an HTTP-Redirect URL (DEFLATE, base64, query parameter). */
function authnRequestOf(url: string): string {
  return inflateRawSync(Buffer.from(new URL(url).searchParams.get("SAMLRequest")!, "base64")).toString("utf8");
}

const attributeOf = (xml: string, element: string, attribute: string) =>
  new RegExp(`<${element}\\b[^>]*\\s${attribute}="([^"]*)"`).exec(xml)?.[1];

const responseXml = (post: SamlPost) => Buffer.from(post.SAMLResponse, "base64").toString("utf8");

/** Every signature and digest algorithm in a document. */
function signingAlgorithms(xml: string): string[] {
  return [...xml.matchAll(/<(?:\w+:)?(?:SignatureMethod|DigestMethod)\b[^>]*\sAlgorithm="([^"]*)"/g)].map((match) => match[1]!);
}

async function rejection(promise: Promise<unknown>): Promise<string> {
  const outcome = await promise.then(
    () => null,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(Error);
  return (outcome as Error).message;
}

/** Starts an IdP for the SP and stops it after the describe block. */
function withIdp(options: () => Promise<Omit<SamlIdpOptions, "sp">> | Omit<SamlIdpOptions, "sp">, sp: () => Partial<SamlIdpOptions["sp"]> = () => ({})) {
  const handle = { idp: undefined as unknown as SamlIdp };
  beforeAll(async () => {
    handle.idp = await startSamlIdp({ ...(await options()), sp: { entityId: SP_ENTITY_ID, acsUrl: ACS_URL, ...sp() } });
  });
  afterAll(async () => {
    await handle.idp?.stop();
  });
  return handle;
}

describe.skipIf(missing !== null)("SAML sign-in at SimpleSAMLphp, validated by node-saml", () => {
  describe("assertion signed with RSA-SHA256, persistent NameID (the defaults)", () => {
    const held = withIdp(() => ({ users: [ALICE, { username: "bob", password: "bob's password", attributes: { [`${CLAIMS}/emailaddress`]: ["bob@acme.test"] } }] }));
    const requests = requestStore();

    it("signs Alice in: the profile's NameID, format, issuer, attributes and the request's ID in InResponseTo", async () => {
      const { idp } = held;
      expect(idp.metadataXml).toContain(`entityID="${idp.entityId}"`);
      expect(idp.metadataXml).toContain(`Location="${idp.ssoUrl}"`);
      const sp = strictSp(idp, requests);
      const url = await sp.getAuthorizeUrlAsync("relay-1", undefined, {});
      const request = authnRequestOf(url);
      const requestId = attributeOf(request, "samlp:AuthnRequest", "ID")!;
      expect(attributeOf(request, "samlp:AuthnRequest", "AssertionConsumerServiceURL")).toBe(ACS_URL);
      expect(attributeOf(request, "samlp:AuthnRequest", "Destination")).toBe(idp.ssoUrl);

      const post = await idp.signIn(url, ALICE);
      expect(post.acsUrl).toBe(ACS_URL);
      expect(post.RelayState).toBe("relay-1");
      const xml = responseXml(post);
      expect(attributeOf(xml, "samlp:Response", "Destination")).toBe(ACS_URL);
      expect(attributeOf(xml, "saml:SubjectConfirmationData", "Recipient")).toBe(ACS_URL);

      const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: post.SAMLResponse, RelayState: post.RelayState! });
      expect(profile).toMatchObject({
        issuer: idp.entityId,
        nameID: idp.nameIdOf("alice"),
        nameIDFormat: PERSISTENT,
        spNameQualifier: SP_ENTITY_ID,
        inResponseTo: requestId,
      } satisfies Partial<Profile>);
      expect(profile!.nameID).toMatch(/^[0-9a-f]{40}$/);
      // One value: a string; several: an array (the SP normalizes).
      expect(profile!.attributes).toEqual({
        [`${CLAIMS}/emailaddress`]: "alice@acme.test",
        [`${CLAIMS}/name`]: "Alice Example",
        "http://schemas.microsoft.com/ws/2008/06/identity/claims/groups": ["engineering", "admins"],
      });

      // The request's ID is consumed: the same Response posted again is refused.
      expect(await rejection(sp.validatePostResponseAsync({ SAMLResponse: post.SAMLResponse }))).toBe("InResponseTo is not valid");
    });

    it("signs Bob in with his password only, and the IdP's session signs him in again without the form, with the same NameID", async () => {
      const { idp } = held;
      const sp = strictSp(idp, requests);
      await expect(idp.signIn(await sp.getAuthorizeUrlAsync("", undefined, {}), { username: "bob", password: ALICE.password })).rejects.toThrow(
        "the IdP refused the username and password of bob",
      );
      const first = await idp.signIn(await sp.getAuthorizeUrlAsync("", undefined, {}), { username: "bob", password: "bob's password" });
      const again = await idp.signIn(await sp.getAuthorizeUrlAsync("", undefined, {}), undefined, first.cookies);
      for (const post of [first, again]) {
        const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: post.SAMLResponse });
        expect(profile!.nameID).toBe(idp.nameIdOf("bob"));
        expect(profile!.attributes).toEqual({ [`${CLAIMS}/emailaddress`]: "bob@acme.test" });
      }
      expect(idp.nameIdOf("bob")).not.toBe(idp.nameIdOf("alice"));
    });

    it("is refused where a signed Response is required, under another certificate, for another audience, and unsolicited", async () => {
      const { idp } = held;
      const signIn = async (sp: SAML) => {
        const post = await idp.signIn(await sp.getAuthorizeUrlAsync("", undefined, {}), ALICE);
        return sp.validatePostResponseAsync({ SAMLResponse: post.SAMLResponse });
      };
      // node-saml's default wantAuthnResponseSigned is true: an IdP that signs only the assertion fails it.
      expect(await rejection(signIn(strictSp(idp, requests, { wantAuthnResponseSigned: true })))).toBe("Invalid document signature");
      const other = await selfSignedCertificate("another IdP");
      expect(await rejection(signIn(strictSp(idp, requests, { idpCert: other.certificatePem })))).toBe("Invalid signature");
      expect(await rejection(signIn(strictSp(idp, requests, { audience: "https://other.example.test/saml" })))).toMatch(/^SAML assertion audience mismatch/);

      const unsolicited = await idp.signIn(idp.idpInitiatedUrl, ALICE);
      expect(attributeOf(responseXml(unsolicited), "samlp:Response", "InResponseTo")).toBeUndefined();
      expect(await rejection(strictSp(idp, requests).validatePostResponseAsync({ SAMLResponse: unsolicited.SAMLResponse }))).toBe(
        "InResponseTo is missing from response",
      );
    });

    it("leaves Destination and Recipient to the SP: a Response for another ACS passes node-saml", async () => {
      const { idp } = held;
      const post = await idp.signIn(await strictSp(idp, requests).getAuthorizeUrlAsync("", undefined, {}), ALICE);
      expect(attributeOf(responseXml(post), "samlp:Response", "Destination")).toBe(ACS_URL);
      const elsewhere = strictSp(idp, requests, { callbackUrl: "https://auth.example.test/t/other/saml/acs" });
      const { profile } = await elsewhere.validatePostResponseAsync({ SAMLResponse: post.SAMLResponse });
      expect(profile!.nameID).toBe(idp.nameIdOf("alice"));
      // The signed assertion, as node-saml parsed it, carries what the SP checks itself.
      const assertion = (profile!.getAssertion!() as { Assertion: SignedAssertion }).Assertion;
      const confirmation = assertion.Subject[0]!.SubjectConfirmation[0]!;
      expect(confirmation.$.Method).toBe("urn:oasis:names:tc:SAML:2.0:cm:bearer");
      expect(confirmation.SubjectConfirmationData[0]!.$.Recipient).toBe(ACS_URL);
      expect(assertion.Issuer[0]!._).toBe(idp.entityId);
    });
  });

  describe("Response and assertion both signed", () => {
    const held = withIdp(() => ({ users: [ALICE], signResponse: true, signAssertion: true }));

    it("passes with wantAuthnResponseSigned and wantAssertionsSigned", async () => {
      const { idp } = held;
      const sp = strictSp(idp, requestStore(), { wantAuthnResponseSigned: true });
      const post = await idp.signIn(await sp.getAuthorizeUrlAsync("", undefined, {}), ALICE);
      expect(signingAlgorithms(responseXml(post))).toHaveLength(4);
      const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: post.SAMLResponse });
      expect(profile!.nameID).toBe(idp.nameIdOf("alice"));
    });
  });

  describe("only the Response signed", () => {
    const held = withIdp(() => ({ users: [ALICE], signResponse: true, signAssertion: false }));

    it("is refused by wantAssertionsSigned", async () => {
      const { idp } = held;
      const sp = strictSp(idp, requestStore(), { wantAuthnResponseSigned: true });
      const post = await idp.signIn(await sp.getAuthorizeUrlAsync("", undefined, {}), ALICE);
      expect(await rejection(sp.validatePostResponseAsync({ SAMLResponse: post.SAMLResponse }))).toBe("Invalid signature");
    });
  });

  describe("encrypted assertion", () => {
    let spKeys: { certificatePem: string; privateKeyPem: string };
    const held = withIdp(
      async () => {
        spKeys = await selfSignedCertificate("Latchkey SP encryption");
        return { users: [ALICE], encryptAssertion: true };
      },
      () => ({ encryptionCertificatePem: spKeys.certificatePem }),
    );

    it("is decrypted with the SP's key (decryptionPvk), its signature checked inside, and refused without the key", async () => {
      const { idp } = held;
      const requests = requestStore();
      const sp = strictSp(idp, requests, { decryptionPvk: spKeys.privateKeyPem });
      const post = await idp.signIn(await sp.getAuthorizeUrlAsync("", undefined, {}), ALICE);
      const xml = responseXml(post);
      expect(xml).toContain("<saml:EncryptedAssertion>");
      expect(xml).not.toContain("<saml:Assertion");
      expect(xml).not.toContain("alice@acme.test");
      // SimpleSAMLphp's algorithms: RSA-OAEP (MGF1, SHA-1) for the key, AES-128-CBC for the content.
      expect(xml).toContain('Algorithm="http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p"');
      expect(xml).toContain('Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"');
      const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: post.SAMLResponse });
      expect(profile!.nameID).toBe(idp.nameIdOf("alice"));
      expect(profile!.attributes).toMatchObject({ [`${CLAIMS}/emailaddress`]: "alice@acme.test" });

      const keyless = strictSp(idp, requests);
      const second = await idp.signIn(await keyless.getAuthorizeUrlAsync("", undefined, {}), undefined, post.cookies);
      expect(await rejection(keyless.validatePostResponseAsync({ SAMLResponse: second.SAMLResponse }))).toBe(
        "No decryption key for encrypted SAML response",
      );
    });
  });

  describe("signed with RSA-SHA1", () => {
    const held = withIdp(() => ({ users: [ALICE], signatureAlgorithm: "rsa-sha1" }));

    it("passes node-saml 5.1 even under the strict configuration: refusing SHA-1 is the SP's own check", async () => {
      const { idp } = held;
      const sp = strictSp(idp, requestStore());
      const post = await idp.signIn(await sp.getAuthorizeUrlAsync("", undefined, {}), ALICE);
      expect(signingAlgorithms(responseXml(post))).toEqual([SHA1_SIGNATURE, SHA1_DIGEST]);
      // signatureAlgorithm: "sha256" only chooses how the SP signs; xml-crypto verifies rsa-sha1 and sha1 digests.
      const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: post.SAMLResponse });
      expect(profile!.nameID).toBe(idp.nameIdOf("alice"));
    });
  });

  describe("emailAddress NameID, signed AuthnRequests required", () => {
    let spKeys: { certificatePem: string; privateKeyPem: string };
    const CAROL = { username: "carol@acme.test", password: "carol's password", attributes: { [`${CLAIMS}/name`]: ["Carol"] } };
    const held = withIdp(
      async () => {
        spKeys = await selfSignedCertificate("Latchkey SP signing");
        return { users: [CAROL], nameIdFormat: "emailAddress" };
      },
      () => ({ signingCertificatePem: spKeys.certificatePem }),
    );

    it("accepts a request signed with the SP's key (SigAlg RSA-SHA256) and refuses an unsigned one", async () => {
      const { idp } = held;
      const requests = requestStore();
      const sp = strictSp(idp, requests, { identifierFormat: EMAIL_ADDRESS, privateKey: spKeys.privateKeyPem });
      const url = await sp.getAuthorizeUrlAsync("", undefined, {});
      expect(new URL(url).searchParams.get("SigAlg")).toBe("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256");
      const post = await idp.signIn(url, CAROL);
      const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: post.SAMLResponse });
      expect(profile).toMatchObject({ nameID: "carol@acme.test", nameIDFormat: EMAIL_ADDRESS });
      expect(idp.nameIdOf("carol@acme.test")).toBe("carol@acme.test");

      const unsigned = strictSp(idp, requests, { identifierFormat: EMAIL_ADDRESS });
      await expect(idp.signIn(await unsigned.getAuthorizeUrlAsync("", undefined, {}), CAROL)).rejects.toThrow(
        "SimpleSAML\\Error\\Exception: Validation of received messages enabled, but no signature found on message.",
      );
    });
  });
});
