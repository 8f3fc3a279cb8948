/**
 * SAML connections: single sign-on by work address through an organization's SAML identity
 * provider, the response POSTed to the connection's ACS and verified there, the sign-in completed
 * in the browser that started it. The identity provider is a stand-in that crafts each response
 * (tests/helpers/federation/saml-idp-standin.ts), so every rule can be broken one at a time; each
 * refusal ends on the hosted error page, creates nothing, and tells the connection's
 * administrators which condition failed. The end-to-end suite signs in through SimpleSAMLphp.
 */
import { and, eq } from "drizzle-orm";
import { decodeJwt } from "jose";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { enterpriseConnections, federationTransactions, samlAssertionReplays } from "../../../db/schema";
import { ACME, API, authzWorkspace, GLOBEX, WEB } from "../../helpers/fixtures";
import { basic, call, createHarness, exchangeCode, PUBLIC_URL, seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { outcome, postPassword, postStep, startSignIn, viewOf, type PendingSignIn } from "../../helpers/factors/sign-in";
import { readAuthnRequest, samlIdpStandin, TRANSIENT, type AuthnRequestSeen, type ResponseOptions } from "../../helpers/federation/saml-idp-standin";
import { addDomain, addSamlConnection, countsOf, deliverCallback, expectHostedError, identitiesOf, organizationIdOf, setConnection, setSamlConfig, upstreamLocation, userByEmail } from "../../helpers/federation/setup";
import { generateSpKeyPair } from "../../../lib/federation/upstream/self-signed-certificate";

let h: Harness;
const ws = uniqueWorkspaceId("saml");
const idp = samlIdpStandin();
let connection: { id: string; spCertificatePem: string };

/** A local account in the organization's domain, with a password of its own. */
const LOCAL_ALICE = { email: "alice.local@acme.test", password: "alice's own local password" };

beforeAll(async () => {
  h = await createHarness();
  const doc = authzWorkspace(ws);
  doc.users.push({ email: LOCAL_ALICE.email, password: LOCAL_ALICE.password, email_verified: true });
  await seed(h, doc);
  connection = await addSamlConnection(h, ws, { organization: ACME, idp, defaultRoles: ["reader"] });
  await addDomain(h, ws, { organization: ACME, domain: "acme.test", verified: true });
});

const person = (name: string) => ({ nameId: `${name}-persistent-id`, attributes: { email: `${name}@acme.test`, name: `${name[0]!.toUpperCase()}${name.slice(1)}` } });

/** Single sign-on by address: the redirect to the identity provider, and the AuthnRequest it carries. */
async function toIdp(email: string): Promise<{ s: PendingSignIn; request: AuthnRequestSeen; location: URL }> {
  const s = await startSignIn(h, ws, { ...WEB, scope: "openid email profile read:things write:things", resource: API });
  const location = upstreamLocation(await postStep(h, s, "/sign-in/sso", { email }), ws);
  return { s, request: readAuthnRequest(location), location };
}

/** The identity provider's POST to the ACS: cross-site, so without the browser's cookies. */
function postToAcs(form: Record<string, string>, path = `/t/${ws}/federation/saml/acs?connection=${connection.id}`): Promise<Response> {
  return call(h, path, { form });
}

async function respond(request: AuthnRequestSeen, options: ResponseOptions): Promise<Response> {
  const { SAMLResponse, RelayState } = await idp.respond(request, options, h.clock.now());
  return postToAcs({ SAMLResponse, ...(RelayState ? { RelayState } : {}) });
}

/** The whole sign-in as `name`, with `options` on the response: the final outcome of the browser's callback. */
async function signIn(name: string, options: Partial<ResponseOptions> = {}) {
  const { s, request } = await toIdp(`${name}@acme.test`);
  const acs = await respond(request, { ...person(name), ...options });
  if (acs.status !== 303) { if (process.env.SAML_DEBUG) console.log("ACS refused:", acs.status, (await acs.clone().text()).match(/<h1>[^<]*/)?.[0], await lastFailure()); return { s, acs, final: null }; }
  return { s, acs, final: await deliverCallback(h, s, new URL(acs.headers.get("location")!, "http://x")) };
}

async function lastFailure(): Promise<string | null> {
  const [row] = await h.service.db.select({ lastFailure: enterpriseConnections.lastFailure }).from(enterpriseConnections).where(eq(enterpriseConnections.id, connection.id));
  return row?.lastFailure ?? null;
}

/** A refusal at the ACS: the hosted page, nothing created, and the condition named for the administrators. */
async function expectRefused(res: Response, failure: RegExp, code: Parameters<typeof expectHostedError>[1] = "federation_invalid_response") {
  await expectHostedError(res, code);
  expect(await lastFailure()).toMatch(failure);
}

describe("SAML sign-in through an organization's identity provider", () => {
  it("sends an AuthnRequest for this connection (its entity ID, its ACS, a fresh request ID and RelayState)", async () => {
    const { request, location } = await toIdp("alice@acme.test");
    expect(location.origin + location.pathname).toBe(idp.ssoUrl);
    expect(request.issuer).toBe(`${PUBLIC_URL}/t/${ws}/federation/saml/metadata?connection=${connection.id}`);
    expect(request.acs).toBe(`${PUBLIC_URL}/t/${ws}/federation/saml/acs?connection=${connection.id}`);
    expect(request.id).toMatch(/^_[0-9a-f]{40}$/);
    expect(request.relayState).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(request.signed).toBe(false);
  });

  it("keeps, between the ACS and the browser, the asserted identity only: not the rest of what the identity provider sent", async () => {
    const { request } = await toIdp("dora@acme.test");
    const acs = await respond(request, { nameId: "dora-persistent-id", attributes: { email: "dora@acme.test", name: "Dora", department: "Finance" } });
    expect(acs.status).toBe(303);
    const [trip] = await h.service.db.select().from(federationTransactions).where(and(eq(federationTransactions.workspaceId, ws), eq(federationTransactions.requestId, request.id)));
    expect(trip.answer).toMatchObject({ subject: "dora-persistent-id", email: "dora@acme.test", name: "Dora" });
    expect(trip.answer).not.toHaveProperty("received");
    expect(JSON.stringify(trip.answer)).not.toContain("Finance");
  });

  it("signs a user of the verified domain in; the ID token, UserInfo and the session check carry the organization and the connection", async () => {
    const before = await countsOf(h, ws);
    const { s, acs, final } = await signIn("alice");
    expect(acs.status).toBe(303);
    // The response is verified at the ACS; only an opaque state travels on to the callback.
    expect(acs.headers.get("location")).toMatch(new RegExp(`^/t/${ws}/federation/callback\\?state=[A-Za-z0-9_-]{43}$`));
    const o = outcome(final!);
    if (o.to !== "callback") throw new Error(`stopped at the page: ${o.error}`);
    const res = await exchangeCode(h, ws, { code: o.code, redirect_uri: WEB.redirect_uri, verifier: s.verifier, authorization: basic(WEB.client_id, WEB.secret) });
    expect(res.status).toBe(200);
    const tokens = await res.json();
    const acme = await organizationIdOf(h, ws, ACME);
    const claims = decodeJwt(tokens.id_token);
    expect(claims).toMatchObject({ organization_id: acme, connection_id: connection.id, email: "alice@acme.test", email_verified: false, name: "Alice" });
    expect(claims.amr).toContain("fed");
    expect(claims.amr).not.toContain("mfa");
    const info = await call(h, `/t/${ws}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(await info.json()).toMatchObject({ organization_id: acme, connection_id: connection.id });
    const check = await call(h, `/t/${ws}/oidc/session`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(await check.json()).toMatchObject({ active: true, sub: claims.sub });
    // The permission check answers per organization: the connection's default role, in acme only.
    const allowed = async (permission: string, organizationId: string) => {
      const res = await call(h, `/t/${ws}/authorization/check`, {
        method: "POST",
        body: JSON.stringify({ resource: API, permission, organization_id: organizationId }),
        headers: { authorization: `Bearer ${tokens.access_token}`, "content-type": "application/json" },
      });
      return ((await res.json()) as { allowed: boolean }).allowed;
    };
    expect(await allowed("read:things", acme)).toBe(true);
    expect(await allowed("write:things", acme)).toBe(false);
    expect(await allowed("read:things", await organizationIdOf(h, ws, GLOBEX))).toBe(false);
    const after = await countsOf(h, ws);
    expect(after.users - before.users).toBe(1);
    const [row] = await h.service.db.select().from(enterpriseConnections).where(eq(enterpriseConnections.id, connection.id));
    expect(row!.lastSuccessAt).not.toBeNull();
  });

  it("signs the same NameID in again as the same user", async () => {
    const first = await signIn("bob");
    expect(outcome(first.final!).to).toBe("callback");
    const before = await countsOf(h, ws);
    const again = await signIn("bob", { attributes: { email: "bob@acme.test", name: "Robert" } });
    expect(outcome(again.final!).to).toBe("callback");
    expect((await countsOf(h, ws)).users).toBe(before.users);
  });

  it("accepts a signed Response around an unsigned assertion, an encrypted assertion, and the next certificate during a rotation", async () => {
    expect(outcome((await signIn("carol", { sign: "response" })).final!).to).toBe("callback");
    expect(outcome((await signIn("dave", { encryptTo: connection.spCertificatePem })).final!).to).toBe("callback");
    const next = generateSpKeyPair("idp next", h.clock.now());
    await setSamlConfig(h, connection.id, { idp_certificates: [idp.certificatePem, next.certificatePem] });
    try {
      expect(outcome((await signIn("erin", { signingKey: next })).final!).to).toBe("callback");
    } finally {
      await setSamlConfig(h, connection.id, { idp_certificates: [idp.certificatePem] });
    }
  });

  it("counts the identity provider's MFA only when the connection trusts it", async () => {
    const mfa = "http://schemas.microsoft.com/claims/multipleauthn";
    const untrusted = await signIn("frank", { authnContextClassRef: mfa });
    const u = outcome(untrusted.final!);
    if (u.to !== "callback") throw new Error("not signed in");
    const ut = await (await exchangeCode(h, ws, { code: u.code, redirect_uri: WEB.redirect_uri, verifier: untrusted.s.verifier, authorization: basic(WEB.client_id, WEB.secret) })).json();
    expect(decodeJwt(ut.id_token).amr).not.toContain("mfa");
    // Kept as sent, for administrators, even when it does not count.
    const frank = (await userByEmail(h, ws, "frank@acme.test"))!;
    expect((await identitiesOf(h, ws, frank.id))[0]).toMatchObject({ upstreamAcr: mfa });
    await setConnection(h, connection.id, { trustUpstreamMfa: true });
    try {
      const trusted = await signIn("frank", { authnContextClassRef: mfa });
      const t = outcome(trusted.final!);
      if (t.to !== "callback") throw new Error("not signed in");
      const tt = await (await exchangeCode(h, ws, { code: t.code, redirect_uri: WEB.redirect_uri, verifier: trusted.s.verifier, authorization: basic(WEB.client_id, WEB.secret) })).json();
      expect(decodeJwt(tt.id_token).amr).toEqual(expect.arrayContaining(["fed", "mfa"]));
    } finally {
      await setConnection(h, connection.id, { trustUpstreamMfa: false });
    }
  });

  it("signs the AuthnRequest when the connection asks for it", async () => {
    await setSamlConfig(h, connection.id, { sign_requests: true });
    try {
      const { request, location } = await toIdp("gina@acme.test");
      expect(request.signed).toBe(true);
      expect(location.searchParams.get("SigAlg")).toBe("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256");
    } finally {
      await setSamlConfig(h, connection.id, { sign_requests: false });
    }
  });

  it("publishes the SP metadata at the entity ID: ACS, certificate, NameID format, signed assertions wanted", async () => {
    const res = await call(h, `/t/${ws}/federation/saml/metadata?connection=${connection.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/samlmetadata+xml");
    const xml = await res.text();
    expect(xml).toContain(`entityID="${PUBLIC_URL}/t/${ws}/federation/saml/metadata?connection=${connection.id}"`);
    expect(xml).toContain(`Location="${PUBLIC_URL}/t/${ws}/federation/saml/acs?connection=${connection.id}"`);
    expect(xml).toContain('WantAssertionsSigned="true"');
    expect(xml).toContain("urn:oasis:names:tc:SAML:2.0:nameid-format:persistent");
    expect(xml.replace(/\s/g, "")).toContain(connection.spCertificatePem.replace(/-----[^-]+-----|\s/g, ""));
    expect((await call(h, `/t/${ws}/federation/saml/metadata?connection=nope`)).status).toBe(404);
  });
});

describe("what the ACS refuses", () => {
  it("an unsigned assertion", async () => {
    const { acs } = await signIn("mallory", { sign: "none" });
    await expectRefused(acs, /signature/i);
  });

  it("a signature by another key", async () => {
    const { acs } = await signIn("mallory", { signingKey: generateSpKeyPair("not the idp", h.clock.now()) });
    await expectRefused(acs, /signature/i);
  });

  it("a wrapped signature: the signed assertion moved beside, or inside, an unsigned one with other content", async () => {
    const forged = (signed: string) => signed.replace(/<saml:Assertion [^>]*ID="[^"]+"/, (m) => m.replace(/ID="[^"]+"/, 'ID="_forged"')).replace("mallory@acme.test", "ceo@acme.test");
    const beside = await signIn("mallory", {
      tamper: (xml) => {
        const signed = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(xml)![0];
        const unsigned = forged(signed).replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, "");
        return xml.replace(signed, unsigned + signed);
      },
    });
    await expectRefused(beside.acs, /signature|assertions/i);
    const inside = await signIn("mallory", {
      tamper: (xml) => {
        const signed = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(xml)![0];
        const unsigned = forged(signed).replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, "");
        return xml.replace(signed, unsigned.replace("</saml:Assertion>", `<saml:Advice>${signed}</saml:Advice></saml:Assertion>`));
      },
    });
    await expectRefused(inside.acs, /signature/i);
    expect(await userByEmail(h, ws, "ceo@acme.test")).toBeFalsy();
  });

  it("the wrong audience", async () => {
    const { acs } = await signIn("mallory", { audience: "https://other-sp.example/saml" });
    await expectRefused(acs, /audience/i);
  });

  it("the wrong recipient", async () => {
    const { acs } = await signIn("mallory", { recipient: `${PUBLIC_URL}/t/${ws}/federation/saml/acs?connection=other` });
    await expectRefused(acs, /Recipient/);
  });

  it("the wrong destination", async () => {
    const { acs } = await signIn("mallory", { destination: "https://other-sp.example/acs", sign: "both" });
    await expectRefused(acs, /Destination/);
  });

  it("the wrong issuer", async () => {
    const { acs } = await signIn("mallory", { issuer: "https://other-idp.example" });
    await expectRefused(acs, /Issuer/);
  });

  it("an expired assertion, and one not yet valid (beyond the two minutes of clock skew); within the skew it is accepted", async () => {
    await expectRefused((await signIn("mallory", { notOnOrAfter: -121, confirmationNotOnOrAfter: 300 })).acs, /expired/);
    await expectRefused((await signIn("mallory", { confirmationNotOnOrAfter: -121 })).acs, /subject confirmation has expired/);
    await expectRefused((await signIn("mallory", { notBefore: 121 })).acs, /not yet valid/);
    expect(outcome((await signIn("henry", { notBefore: 100, notOnOrAfter: -100 })).final!).to).toBe("callback");
  });

  it("a replayed response, and the same assertion ID in an answer to another request", async () => {
    const { s, request } = await toIdp("ivan@acme.test");
    const response = await idp.respond(request, { ...person("ivan"), assertionId: "_replayed-assertion" }, h.clock.now());
    const first = await postToAcs({ SAMLResponse: response.SAMLResponse, RelayState: response.RelayState! });
    expect(first.status).toBe(303);
    await expectRefused(await postToAcs({ SAMLResponse: response.SAMLResponse, RelayState: response.RelayState! }), /replayed/);
    // A new round trip, answered with a fresh response that reuses the assertion's ID.
    const second = await toIdp("ivan@acme.test");
    await expectRefused(await respond(second.request, { ...person("ivan"), assertionId: "_replayed-assertion" }), /replayed/);
    expect(outcome(await deliverCallback(h, s, new URL(first.headers.get("location")!, "http://x"))).to).toBe("callback");
    const [stored] = await h.service.db.select().from(samlAssertionReplays).where(and(eq(samlAssertionReplays.connectionId, connection.id), eq(samlAssertionReplays.assertionId, "_replayed-assertion")));
    // Kept until the later of its NotOnOrAfter times, plus the skew.
    expect(stored!.expiresAt.getTime()).toBe(h.clock.now().getTime() + 300_000 + 120_000);
  });

  it("a second response to a request already answered", async () => {
    const { request } = await toIdp("judy@acme.test");
    expect((await respond(request, person("judy"))).status).toBe(303);
    await expectRefused(await respond(request, person("judy")), /RelayState names no pending sign-in|already answered/, "federation_expired");
  });

  it("a response to another round trip's request", async () => {
    const a = await toIdp("mallory@acme.test");
    const b = await toIdp("mallory@acme.test");
    // Answers request A, delivered with B's RelayState.
    const { SAMLResponse } = await idp.respond(a.request, person("mallory"), h.clock.now());
    await expectRefused(await postToAcs({ SAMLResponse, RelayState: b.request.relayState! }), /InResponseTo/);
  });

  it("a response at another connection's ACS with this connection's RelayState", async () => {
    const other = samlIdpStandin("https://idp.globex.test/saml");
    const globex = await addSamlConnection(h, ws, { organization: GLOBEX, idp: other });
    const { request } = await toIdp("mallory@acme.test");
    // Globex's identity provider answers, correctly for Globex's connection, carrying Acme's pending sign-in.
    const forGlobex = { ...request, issuer: `${PUBLIC_URL}/t/${ws}/federation/saml/metadata?connection=${globex.id}`, acs: `${PUBLIC_URL}/t/${ws}/federation/saml/acs?connection=${globex.id}` };
    const { SAMLResponse } = await other.respond(forGlobex, person("mallory"), h.clock.now());
    const res = await postToAcs({ SAMLResponse, RelayState: request.relayState! }, `/t/${ws}/federation/saml/acs?connection=${globex.id}`);
    await expectHostedError(res, "federation_expired");
    const [row] = await h.service.db.select({ lastFailure: enterpriseConnections.lastFailure }).from(enterpriseConnections).where(eq(enterpriseConnections.id, globex.id));
    expect(row!.lastFailure).toMatch(/names no pending sign-in through this connection/);
  });

  it("an unsolicited response (sign-in started at the identity provider)", async () => {
    const { request } = await toIdp("mallory@acme.test");
    const { SAMLResponse } = await idp.respond({ ...request, relayState: null }, { ...person("mallory"), inResponseTo: null }, h.clock.now());
    await expectRefused(await postToAcs({ SAMLResponse }), /unsolicited/i, "federation_unsolicited");
    // Where the connection names an application for it, the user is sent there to sign in (nothing is created from the response).
    await setSamlConfig(h, connection.id, { idp_initiated_client_id: WEB.client_id });
    try {
      const before = await countsOf(h, ws);
      const sent = await postToAcs({ SAMLResponse });
      expect(sent.status).toBe(303);
      expect(sent.headers.get("location")).toBe(`${new URL(WEB.redirect_uri).origin}/`);
      expect(sent.headers.getSetCookie()).toEqual([]);
      expect(await countsOf(h, ws)).toEqual(before);
      expect(await lastFailure()).toMatch(/started at the identity provider was sent to/);
    } finally {
      await setSamlConfig(h, connection.id, { idp_initiated_client_id: null });
    }
    // With a RelayState but no InResponseTo, it answers no request.
    const { SAMLResponse: noInResponseTo } = await idp.respond(request, { ...person("mallory"), inResponseTo: null }, h.clock.now());
    await expectRefused(await postToAcs({ SAMLResponse: noInResponseTo, RelayState: request.relayState! }), /InResponseTo/);
  });

  it("an email outside the organization's verified domains, and an assertion without an email", async () => {
    const outside = await signIn("mallory", { attributes: { email: "mallory@elsewhere.test" } });
    expect(outside.acs.status).toBe(303);
    await expectHostedError(outside.final!, "federation_not_admitted");
    expect(await lastFailure()).toMatch(/outside the organization's verified domains/);
    expect(await userByEmail(h, ws, "mallory@elsewhere.test")).toBeFalsy();
    const none = await signIn("mallory", { attributes: {} });
    await expectHostedError(none.final!, "federation_no_email");
  });

  it("an assertion of another spelling of a local account's address (upper case, the domain's trailing dot) gets the link prompt for that account, not a second account", async () => {
    const local = (await userByEmail(h, ws, LOCAL_ALICE.email))!;
    const before = await countsOf(h, ws);
    const { s, request } = await toIdp(LOCAL_ALICE.email);
    const acs = await respond(request, { nameId: "alice-local-persistent-id", attributes: { email: "ALICE.LOCAL@acme.test.", name: "Alice" } });
    expect(acs.status).toBe(303);
    const final = await deliverCallback(h, s, new URL(acs.headers.get("location")!, "http://x"));
    expect(outcome(final)).toEqual({ to: "page", error: null });
    expect(final.headers.getSetCookie().filter((c) => c.startsWith("lk_session="))).toEqual([]);
    const view = await viewOf(h, s);
    expect(view.step.kind).toBe("first_factor");
    expect(view.federation.linking).toEqual({ email: "ALICE.LOCAL@acme.test", provider: expect.any(String) });
    expect(await countsOf(h, ws)).toEqual(before);
    expect(await userByEmail(h, ws, "alice.local@acme.test.")).toBeNull();
    // Proving the account with its password (typed in yet another spelling) links the identity to it.
    const proved = outcome(await postPassword(h, s, " Alice.Local@ACME.test. ", LOCAL_ALICE.password));
    if (proved.to !== "callback") throw new Error(`not completed: ${proved.error}`);
    expect(await identitiesOf(h, ws, local.id)).toMatchObject([{ subject: "alice-local-persistent-id" }]);
    expect((await countsOf(h, ws)).users).toBe(before.users);
  });

  it("a transient NameID, which cannot identify anyone twice", async () => {
    const { acs } = await signIn("mallory", { nameIdFormat: TRANSIENT });
    await expectRefused(acs, /transient/);
  });

  it("a SHA-1 signature, unless the connection allows it for a legacy identity provider", async () => {
    await expectRefused((await signIn("mallory", { sha1: true })).acs, /SHA-1/);
    await expectRefused((await signIn("mallory", { sha1: true, encryptTo: connection.spCertificatePem })).acs, /SHA-1/);
    await setSamlConfig(h, connection.id, { allow_sha1: true });
    try {
      expect(outcome((await signIn("kate", { sha1: true })).final!).to).toBe("callback");
    } finally {
      await setSamlConfig(h, connection.id, { allow_sha1: false });
    }
  });

  it("an assertion encrypted with RSA PKCS#1 v1.5 or 3DES, and a response whose status is not Success", async () => {
    const { acs } = await signIn("mallory", { encryptTo: connection.spCertificatePem, keyTransport: "http://www.w3.org/2001/04/xmlenc#rsa-1_5" });
    await expectRefused(acs, /rsa-1_5/);
    const tripleDes = await signIn("mallory", { encryptTo: connection.spCertificatePem, cipher: "http://www.w3.org/2001/04/xmlenc#tripledes-cbc" });
    await expectRefused(tripleDes.acs, /tripledes/);
    const failed = await signIn("mallory", { status: "urn:oasis:names:tc:SAML:2.0:status:Responder" });
    await expectRefused(failed.acs, /status urn:oasis:names:tc:SAML:2.0:status:Responder/, "federation_denied");
  });

  it("a malformed or oversized body", async () => {
    const { request } = await toIdp("mallory@acme.test");
    const relay = request.relayState!;
    await expectRefused(await postToAcs({ SAMLResponse: "not base64!", RelayState: relay }), /base64/);
    await expectRefused(await postToAcs({ SAMLResponse: Buffer.from("<samlp:Response").toString("base64"), RelayState: relay }), /not well-formed XML/);
    await expectRefused(await postToAcs({ SAMLResponse: Buffer.from('<!DOCTYPE x [<!ENTITY a "b">]><x/>').toString("base64"), RelayState: relay }), /DOCTYPE/);
    await expectHostedError(await postToAcs({ SAMLResponse: "A".repeat(300 * 1024), RelayState: relay }), "form_too_large");
    await expectHostedError(await call(h, `/t/${ws}/federation/saml/acs?connection=${connection.id}`, { body: "{}", headers: { "content-type": "application/json" } }), "form_media_type");
    await expectHostedError(await postToAcs({ SAMLResponse: "AAAA", RelayState: relay }, `/t/${ws}/federation/saml/acs?connection=unknown`), "federation_option_unavailable");
    // Still usable: nothing was consumed by the refusals.
    expect((await respond(request, person("mallory"))).status).toBe(303);
  });
});

describe.runIf(Boolean(inject("databaseUrl")))("parallel posts of one response (PostgreSQL)", () => {
  it("exactly one of 12 identical posts is accepted; and of 12 responses to one request with distinct assertions, one", async () => {
    const { request } = await toIdp("race@acme.test");
    const response = await idp.respond(request, person("race"), h.clock.now());
    const same = await Promise.all(Array.from({ length: 12 }, () => postToAcs({ SAMLResponse: response.SAMLResponse, RelayState: response.RelayState! })));
    expect(same.filter((r) => r.status === 303)).toHaveLength(1);
    for (const r of same.filter((a) => a.status !== 303)) expect(r.status).toBe(400);

    const other = await toIdp("race@acme.test");
    const distinct = await Promise.all(Array.from({ length: 12 }, async () => idp.respond(other.request, person("race"), h.clock.now())));
    const answers = await Promise.all(distinct.map((d) => postToAcs({ SAMLResponse: d.SAMLResponse, RelayState: d.RelayState! })));
    expect(answers.filter((r) => r.status === 303)).toHaveLength(1);
    for (const r of answers.filter((a) => a.status !== 303)) await expectHostedError(r, "federation_expired");
  });
});
