/**
 * Testing an enterprise connection (lib/federation/connection-test): the tester's browser goes
 * through the identity provider (a second Latchkey workspace for OIDC, the SAML stand-in for SAML)
 * and, back at the callback, reads the attributes received and whether a sign-in would be
 * admitted. Nothing is signed in or created, nothing is recorded on the connection's sign-in
 * status; the round trip is used once and only in the browser holding the test's cookie; another
 * organization's connection is refused; the audit event is written.
 */
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, enterpriseConnections, grants } from "../../../db/schema";
import { beginConnectionTest, ConnectionTestError, type Tester } from "../../../lib/federation/connection-test";
import { escapeHtml } from "../../../lib/hosted/html";
import { ACME, authzWorkspace, GLOBEX } from "../../helpers/fixtures";
import { call, createHarness, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { auditCatalogueMismatches } from "../../helpers/audit";
import { createLatchkeyUpstream, signInUpstream, type LatchkeyUpstream, type UpstreamUser } from "../../helpers/federation/latchkey-upstream";
import { readAuthnRequest, samlIdpStandin } from "../../helpers/federation/saml-idp-standin";
import { addDomain, addSamlConnection, connectionIdOf, countsOf, expectHostedError, organizationIdOf, seedWithSecrets, setConnection } from "../../helpers/federation/setup";

let h: Harness;
const ws = uniqueWorkspaceId("conntest");
let idp: LatchkeyUpstream;
let acme: string;
let globex: string;
let connectionId: string;
let globexConnectionId: string;
const saml = samlIdpStandin();
let samlConnectionId: string;

const ALICE: UpstreamUser = { email: "alice@acme.test", password: "alice upstream password 1", name: "Alice Upstream" };
/** An address in globex's verified domain, asserted by acme's identity provider: a sign-in would be refused. */
const SQUATTER: UpstreamUser = { email: "ceo@globex.test", password: "squatter upstream password" };
const TESTER: Tester = { kind: "operator", id: "operator-1", email: "admin@operators.test" };
const PORTAL_HOME = `https://auth.example/t/${ws}/organization-admin?organization=acme&x=<1>`;

beforeAll(async () => {
  h = await createHarness();
  idp = await createLatchkeyUpstream(h, ws, [ALICE, SQUATTER]);
  const doc = authzWorkspace(ws);
  doc.organizations[0] = {
    ...doc.organizations[0],
    domains: [{ domain: "acme.test", verified: true }],
    connections: [{ name: "Acme IdP", issuer: idp.issuer, client_id: idp.clientId, client_secret: { env: "ACME_IDP_SECRET" }, default_roles: ["reader"] }],
  };
  doc.organizations[1] = {
    ...doc.organizations[1],
    domains: [{ domain: "globex.test", verified: true }],
    connections: [{ name: "Globex IdP", issuer: idp.issuer, client_id: idp.clientId, client_secret: { env: "ACME_IDP_SECRET" } }],
  };
  await seedWithSecrets(h, doc, { ACME_IDP_SECRET: idp.clientSecret });
  acme = await organizationIdOf(h, ws, ACME);
  globex = await organizationIdOf(h, ws, GLOBEX);
  connectionId = await connectionIdOf(h, ws, ACME, "Acme IdP");
  globexConnectionId = await connectionIdOf(h, ws, GLOBEX, "Globex IdP");
  samlConnectionId = (await addSamlConnection(h, ws, { organization: ACME, idp: saml, name: "Acme SAML" })).id;
  await addDomain(h, ws, { organization: ACME, domain: "acme-saml.test", verified: true });
});

const cookieOf = (c: { name: string; value: string }) => `${c.name}=${c.value}`;

/** What a test could have created or touched: the sign-in's rows, grants, and the connection's sign-in status. */
async function footprint() {
  const [g, status] = await Promise.all([
    h.service.db.select({ id: grants.id }).from(grants).where(eq(grants.workspaceId, ws)),
    h.service.db
      .select({ id: enterpriseConnections.id, lastSuccessAt: enterpriseConnections.lastSuccessAt, lastFailureAt: enterpriseConnections.lastFailureAt, lastFailure: enterpriseConnections.lastFailure })
      .from(enterpriseConnections)
      .where(eq(enterpriseConnections.workspaceId, ws)),
  ]);
  return { ...(await countsOf(h, ws)), grants: g.length, status: status.sort((a, b) => a.id.localeCompare(b.id)) };
}

const testEvents = () => h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, "organization.connection_tested")));

/** The test events written since `seen` (their ids before). */
async function eventsSince(seen: Set<string>) {
  return (await testEvents()).filter((e) => !seen.has(e.id));
}
const seenEvents = async () => new Set((await testEvents()).map((e) => e.id));

/** The one test event written since `seen`. */
async function oneEventSince(seen: Set<string>) {
  const written = await eventsSince(seen);
  expect(written).toHaveLength(1);
  return written[0]!;
}

/** Starts an OIDC test and signs `user` in at the upstream: the callback URL and the test's cookie. */
async function throughUpstream(user: UpstreamUser, connection = connectionId, organization = acme) {
  const started = await beginConnectionTest(h.service, { workspaceId: ws, organizationId: organization, connectionId: connection, tester: TESTER });
  expect(started.location.startsWith(`${idp.issuer}/oauth2/authorize?`)).toBe(true);
  expect(started.cookie).toMatchObject({ path: `/t/${ws}/federation/callback`, maxAge: 600 });
  const back = await signInUpstream(h, idp, started.location, user);
  return { started, path: back.pathname + back.search, cookie: cookieOf(started.cookie) };
}

describe("testing an OIDC connection", () => {
  it("shows the attributes received and that a sign-in would be admitted, signing no one in and creating nothing", async () => {
    const before = await footprint();
    const seen = await seenEvents();
    const { path, cookie, started } = await throughUpstream(ALICE);
    const res = await call(h, path, { cookie });
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain("<h1>Connection test</h1>");
    expect(page).toContain(`<code>${escapeHtml(ALICE.email)}</code>`);
    expect(page).toContain(`<code>${escapeHtml(idp.issuer)}</code>`);
    expect(page).toContain(`<code>${escapeHtml(ALICE.name!)}</code>`);
    expect(page).toContain('data-verdict="admitted"');
    expect(page).toContain("an account would be created for this address");
    // Everything the ID token carried, as received: the audience and the nonce are no part of the identity.
    const received = page.slice(page.indexOf("<table data-received>"));
    expect(received).toContain(`<td>ID token</td><th scope="row"><code>aud</code></th><td><code>${escapeHtml(idp.clientId)}</code></td>`);
    expect(received).toMatch(/<th scope="row"><code>nonce<\/code><\/th><td><code>[A-Za-z0-9_-]{20,}<\/code><\/td>/);
    expect(received).toContain(`<code>email</code></th><td><code>${escapeHtml(ALICE.email)}</code>`);
    // The page goes back to the organization in the console.
    expect(page).toContain(`/console/w/${ws}/organizations/${acme}">Back to the organization</a>`);
    // No session cookie, and the test's own cookie cleared.
    const set = res.headers.getSetCookie();
    expect(set.some((c) => c.startsWith("lk_session"))).toBe(false);
    expect(set).toContain(`${started.cookie.name}=; Path=/t/${ws}/federation/callback; Secure; HttpOnly; SameSite=Lax; Max-Age=0`);
    expect(await footprint()).toEqual(before);

    const event = await oneEventSince(seen);
    expect(event).toMatchObject({ subject: connectionId, actor: TESTER.id });
    expect(event.data).toMatchObject({ organization_id: acme, connection_id: connectionId, outcome: "succeeded", by: TESTER.email, tester: "operator", admitted: true });
    expect(typeof event.data.upstream_subject).toBe("string");
    // The subject only: no other attribute's value.
    expect(JSON.stringify(event.data)).not.toContain(ALICE.email);
    expect(JSON.stringify(event.data)).not.toContain(ALICE.name!);
    expect(auditCatalogueMismatches(event)).toEqual([]);
  });

  it("is used once: the same callback again is refused", async () => {
    const { path, cookie } = await throughUpstream(ALICE);
    expect((await call(h, path, { cookie })).status).toBe(200);
    await expectHostedError(await call(h, path, { cookie }), "federation_expired");
  });

  it("is refused without the test's cookie, or with another value, and stays usable by the browser that started it", async () => {
    const seen = await seenEvents();
    const { path, cookie, started } = await throughUpstream(ALICE);
    await expectHostedError(await call(h, path), "federation_expired");
    await expectHostedError(await call(h, path, { cookie: `${started.cookie.name}=${"A".repeat(started.cookie.value.length)}` }), "federation_expired");
    expect(await eventsSince(seen)).toEqual([]);
    const res = await call(h, path, { cookie });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('data-verdict="admitted"');
  });

  it("says a sign-in would be refused, with the condition the connection's last failure would name, and records nothing on the connection", async () => {
    const before = await footprint();
    const seen = await seenEvents();
    const { path, cookie } = await throughUpstream(SQUATTER);
    const page = await (await call(h, path, { cookie })).text();
    expect(page).toContain('data-verdict="refused"');
    expect(page).toContain(escapeHtml("Refused an address: the address is in a domain another organization verified"));
    expect(await footprint()).toEqual(before);
    expect((await oneEventSince(seen)).data).toMatchObject({ outcome: "succeeded", admitted: false });
  });

  it("refuses another organization's connection, and an unknown one", async () => {
    for (const [organizationId, id] of [
      [acme, globexConnectionId],
      [globex, connectionId],
      [acme, "no-such-connection"],
    ] as const) {
      await expect(beginConnectionTest(h.service, { workspaceId: ws, organizationId, connectionId: id, tester: TESTER })).rejects.toMatchObject({ code: "connection_not_found" });
    }
    await expect(beginConnectionTest(h.service, { workspaceId: "another-workspace", organizationId: acme, connectionId, tester: TESTER })).rejects.toBeInstanceOf(ConnectionTestError);
  });

  it("tests a disabled connection (before enabling it), saying it is disabled", async () => {
    await setConnection(h, connectionId, { active: false });
    try {
      const { path, cookie } = await throughUpstream(ALICE);
      const page = await (await call(h, path, { cookie })).text();
      expect(page).toContain('data-verdict="admitted"');
      expect(page).toContain("The connection is disabled");
    } finally {
      await setConnection(h, connectionId, { active: true });
    }
  });

  it("ends on the failure when the upstream's answer does not verify", async () => {
    const seen = await seenEvents();
    const { path, cookie } = await throughUpstream(ALICE);
    const tampered = new URL(path, "http://x");
    tampered.searchParams.set("code", "not-the-code");
    const res = await call(h, tampered.pathname + tampered.search, { cookie });
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain("The test failed.");
    expect(page).not.toContain("data-verdict");
    const event = await oneEventSince(seen);
    expect(event.data).toMatchObject({ outcome: "failed" });
    expect(event.data).not.toHaveProperty("upstream_subject");
  });
});

describe("testing a SAML connection", () => {
  const acs = (form: Record<string, string>) => call(h, `/t/${ws}/federation/saml/acs?connection=${samlConnectionId}`, { form });

  async function samlTest(options: Partial<Parameters<typeof saml.respond>[1]> = {}) {
    const started = await beginConnectionTest(h.service, { workspaceId: ws, organizationId: acme, connectionId: samlConnectionId, tester: { kind: "organization_portal", id: "portal-admin", email: "it@acme.test", back: PORTAL_HOME } });
    const request = readAuthnRequest(new URL(started.location));
    const { SAMLResponse, RelayState } = await saml.respond(request, { nameId: "bob-persistent-id", attributes: { email: "bob@acme-saml.test", name: "Bob" }, ...options }, h.clock.now());
    const posted = await acs({ SAMLResponse, ...(RelayState ? { RelayState } : {}) });
    expect(posted.status).toBe(303);
    const callback = new URL(posted.headers.get("location")!, "http://x");
    return { path: callback.pathname + callback.search, cookie: cookieOf(started.cookie) };
  }

  it("shows the asserted attributes and the verdict, through a disabled connection too, creating nothing", async () => {
    await setConnection(h, samlConnectionId, { active: false });
    try {
      const before = await footprint();
      const seen = await seenEvents();
      const { path, cookie } = await samlTest({ attributes: { email: "bob@acme-saml.test", name: "Bob", department: "Finance & Risk", groups: ["admins", "<auditors>"] } });
      await expectHostedError(await call(h, path), "federation_expired");
      const res = await call(h, path, { cookie });
      expect(res.status).toBe(200);
      const page = await res.text();
      expect(page).toContain("<code>bob-persistent-id</code>");
      expect(page).toContain("<code>bob@acme-saml.test</code>");
      // Everything the assertion carried, the attributes the connection does not map too (each value of a multi-valued one).
      const received = page.slice(page.indexOf("<table data-received>"));
      expect(received).toMatch(/<code>NameID( \([^)]*\))?<\/code><\/th><td><code>bob-persistent-id<\/code>/);
      expect(received).toContain(`<code>department</code></th><td><code>Finance &amp; Risk</code></td>`);
      expect(received).toContain(`<code>groups</code></th><td><code>admins</code><br><code>&lt;auditors&gt;</code></td>`);
      // The portal's test links back to the portal's page.
      expect(page).toContain(`<a href="${escapeHtml(PORTAL_HOME)}">Back to the organization</a>`);
      expect(page).toContain('data-verdict="admitted"');
      expect(page).toContain("The connection is disabled");
      expect(await footprint()).toEqual(before);
      expect((await oneEventSince(seen)).data).toMatchObject({ connection_id: samlConnectionId, outcome: "succeeded", tester: "organization_portal", by: "it@acme.test", upstream_subject: "bob-persistent-id" });
      await expectHostedError(await call(h, path, { cookie }), "federation_expired");
    } finally {
      await setConnection(h, samlConnectionId, { active: true });
    }
  });

  it("shows the condition that failed at the ACS on the tester's page, not on the connection", async () => {
    const before = await footprint();
    const seen = await seenEvents();
    const { path, cookie } = await samlTest({ audience: "https://other-sp.example/saml" });
    const page = await (await call(h, path, { cookie })).text();
    expect(page).toContain("The test failed.");
    expect(page).toMatch(/audience/i);
    expect(await footprint()).toEqual(before);
    expect((await oneEventSince(seen)).data).toMatchObject({ connection_id: samlConnectionId, outcome: "failed" });
  });
});
