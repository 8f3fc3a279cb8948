/**
 * The console's enterprise sign-in settings, tested on lib/console as the server actions run
 * them (runOperation): connections with default roles and a secret that is never returned,
 * domains claimed once per workspace, verified by DNS (injected resolver) or by an operator
 * (audited), and removed.
 */
import { randomUUID, X509Certificate } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { and, eq } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { auditEvents, enterpriseConnections, organizationDomains, organizations, roles } from "../../../db/schema";
import { summarizeAuditEvent } from "../../../lib/audit/summary";
import { runOperation } from "../../../lib/console/operation";
import { domainDns, federationCallbackUri, listConnections, prefillConnection } from "../../../lib/console/organizations";
import { samlServiceProvider } from "../../../lib/federation/protocols/saml";
import { generateSpKeyPair, keyMatchesCertificate } from "../../../lib/federation/upstream/self-signed-certificate";
import { operations } from "../../../lib/console/registry";
import { ensureSystemWorkspace } from "../../../lib/console/system";
import { decryptSecret } from "../../../lib/crypto";
import { listDomains, systemResolveTxt, txtRecordFor } from "../../../lib/federation/domains";
import { seed, uniqueWorkspaceId, type Harness } from "../../helpers/harness";
import { consoleSignIn, createConsoleHarness, createOperator } from "../console-helpers";

let h: Harness;
const W = uniqueWorkspaceId("cfed");
let admin: string;
let viewer: string;
let acme: string;
let globex: string;
let readerRole: string;
let adminRole: string;

beforeAll(async () => {
  h = await createConsoleHarness();
  await seed(h, {
    id: W,
    name: "Federation console",
    roles: [{ name: "reader" }, { name: "admin" }],
    organizations: [
      { slug: "acme", name: "Acme" },
      { slug: "globex", name: "Globex" },
    ],
  });
  await ensureSystemWorkspace(h.service);
  await createOperator(h, "fed-admin@operators.test", { [W]: "admin" });
  await createOperator(h, "fed-viewer@operators.test", { [W]: "viewer" });
  admin = (await consoleSignIn(h, "fed-admin@operators.test")).token;
  viewer = (await consoleSignIn(h, "fed-viewer@operators.test")).token;
  const org = async (slug: string) => (await h.service.db.select().from(organizations).where(and(eq(organizations.workspaceId, W), eq(organizations.slug, slug))))[0].id;
  acme = await org("acme");
  globex = await org("globex");
  const role = async (name: string) => (await h.service.db.select().from(roles).where(and(eq(roles.workspaceId, W), eq(roles.name, name))))[0].id;
  readerRole = await role("reader");
  adminRole = await role("admin");
});

afterEach(() => {
  domainDns.resolveTxt = systemResolveTxt;
});

const run = (token: string, name: keyof typeof operations, input: Record<string, unknown>) =>
  runOperation(h.service, token, W, operations[name] as (typeof operations)["saveConnection"], input, { ip: "192.0.2.9" });

const audits = (type: string) =>
  h.service.db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, type)))
    .orderBy(auditEvents.createdAt);

describe("connections", () => {
  it("creates an OIDC connection with default roles and trust in upstream MFA; the secret is encrypted and never returned", async () => {
    const out = await run(admin, "saveConnection", {
      organization_id: acme,
      name: "Acme Okta",
      kind: "oidc",
      active: "on",
      issuer: "https://acme.okta.example",
      client_id: "latchkey",
      client_secret: "upstream-secret-1",
      default_role_ids: [readerRole, adminRole],
      trust_upstream_mfa: "on",
    });
    expect(out.ok).toBe(true);
    const id = (out as { result: { id: string } }).result.id;
    expect(JSON.stringify(out)).not.toContain("upstream-secret-1");
    const [row] = await h.service.db.select().from(enterpriseConnections).where(eq(enterpriseConnections.id, id));
    expect(row).toMatchObject({ kind: "oidc", active: true, config: { issuer: "https://acme.okta.example", client_id: "latchkey" }, trustUpstreamMfa: true });
    expect(row.defaultRoleIds.sort()).toEqual([readerRole, adminRole].sort());
    expect(decryptSecret(h.service.config.masterKey, row.secretEncrypted!, `enterprise-connection:${id}`)).toBe("upstream-secret-1");

    const listed = await listConnections(h.service, W, acme);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ hasSecret: true, trustUpstreamMfa: true });
    expect(JSON.stringify(listed)).not.toContain("upstream-secret-1");
    expect(JSON.stringify(listed)).not.toContain(row.secretEncrypted!);

    const [event] = await audits("console.organization.connection_saved");
    expect(event.data).toMatchObject({ connection_id: id, secret_changed: true, trust_upstream_mfa: true });
    expect(JSON.stringify(event.data)).not.toContain("upstream-secret-1");
  });

  it("keeps the secret when the field is left empty, and replaces roles and settings", async () => {
    const [c] = await listConnections(h.service, W, acme);
    const [before] = await h.service.db.select().from(enterpriseConnections).where(eq(enterpriseConnections.id, c.id));
    const out = await run(admin, "saveConnection", {
      organization_id: acme,
      connection_id: c.id,
      name: "Acme Okta",
      kind: "oidc",
      issuer: "http://localhost:8080/realms/acme",
      client_id: "latchkey",
      client_secret: "",
      default_role_ids: readerRole,
    });
    expect(out.ok).toBe(true);
    const [after] = await h.service.db.select().from(enterpriseConnections).where(eq(enterpriseConnections.id, c.id));
    expect(after).toMatchObject({ active: false, trustUpstreamMfa: false, defaultRoleIds: [readerRole], secretEncrypted: before.secretEncrypted, config: { issuer: "http://localhost:8080/realms/acme" } });
  });

  it("admits verified domains only unless the administrator chooses otherwise; the choice is shown and its change audited", async () => {
    const [c] = await listConnections(h.service, W, acme);
    expect(c.admission).toBe("verified_domains");
    const save = (admission?: string) =>
      run(admin, "saveConnection", { organization_id: acme, connection_id: c.id, name: "Acme Okta", kind: "oidc", issuer: "https://acme.okta.example", client_id: "latchkey", ...(admission ? { admission } : {}) });
    const before = (await audits("console.organization.connection_saved")).length;

    expect((await save("any_vouched")).ok).toBe(true);
    expect((await listConnections(h.service, W, acme))[0].admission).toBe("any_vouched");
    let events = await audits("console.organization.connection_saved");
    expect(events).toHaveLength(before + 1);
    expect(events.at(-1)!.data).toMatchObject({ connection_id: c.id, admission: "any_vouched", admission_changed: true, admission_previous: "verified_domains" });
    const last = events.at(-1)!;
    const summary = summarizeAuditEvent({ type: last.type, actorEmail: "fed-admin@operators.test", actor: last.actor, subject: last.subject, clientId: null, reason: null, flagged: null, data: last.data as Record<string, unknown> });
    expect(summary).toBe("fed-admin@operators.test saved an enterprise connection of acme, which now admits anyone its provider vouches for");

    // Saved again unchanged: no change of admission recorded.
    expect((await save("any_vouched")).ok).toBe(true);
    events = await audits("console.organization.connection_saved");
    expect(events.at(-1)!.data).toMatchObject({ admission: "any_vouched", admission_changed: false });

    // A form without the field never widens it: back to the default, and that change is recorded too.
    expect((await save()).ok).toBe(true);
    expect((await listConnections(h.service, W, acme))[0].admission).toBe("verified_domains");
    expect((await audits("console.organization.connection_saved")).at(-1)!.data).toMatchObject({ admission: "verified_domains", admission_changed: true, admission_previous: "any_vouched" });

    const bad = await save("everyone");
    expect(bad).toMatchObject({ ok: false, fieldErrors: { admission: expect.any(String) } });
    expect((await listConnections(h.service, W, acme))[0].admission).toBe("verified_domains");
  });

  it("refuses a non-https issuer outside loopback, a missing client id, and a role of another workspace", async () => {
    const out = await run(admin, "saveConnection", { organization_id: acme, name: "Bad", kind: "oidc", issuer: "http://idp.example", default_role_ids: ["not-a-role"] });
    expect(out).toMatchObject({ ok: false, fieldErrors: { issuer: expect.stringMatching(/https/) } });
    const out2 = await run(admin, "saveConnection", { organization_id: acme, name: "Bad", kind: "oidc", issuer: "https://idp.example", default_role_ids: ["not-a-role"] });
    expect(out2).toMatchObject({ ok: false, fieldErrors: { client_id: expect.any(String), default_role_ids: expect.any(String) } });
    expect(await listConnections(h.service, W, acme)).toHaveLength(1);
  });

  describe("SAML", () => {
    const idp = generateSpKeyPair("idp.globex.example", new Date("2026-01-01T00:00:00Z"));
    const next = generateSpKeyPair("idp next", new Date("2026-01-01T00:00:00Z"));
    const body = (pem: string) => pem.replace(/-----[^-]+-----|\s/g, "");
    const metadata = (entityId: string, certs: string[]) =>
      `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}"><md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">${certs
        .map((c) => `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${body(c)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`)
        .join("")}<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.globex.example/sso"/></md:IDPSSODescriptor></md:EntityDescriptor>`;
    let samlId = "";

    it("creates one from pasted metadata, with an SP key pair sealed under the master key and never shown; the audit event has fingerprints", async () => {
      const out = await run(admin, "saveConnection", { organization_id: globex, name: "Globex Entra", kind: "saml", active: "on", metadata_xml: metadata("https://sts.globex.example/", [idp.certificatePem]), attribute_preset: "entra" });
      expect(out.ok).toBe(true);
      samlId = (out as { result: { id: string } }).result.id;
      const [row] = await h.service.db.select().from(enterpriseConnections).where(eq(enterpriseConnections.id, samlId));
      expect(row.config).toMatchObject({ idp_entity_id: "https://sts.globex.example/", sso_url: "https://idp.globex.example/sso", idp_certificates: [idp.certificatePem], attribute_preset: "entra", allow_sha1: false });
      const privateKey = decryptSecret(h.service.config.masterKey, row.secretEncrypted!, `enterprise-connection:${samlId}`);
      expect(keyMatchesCertificate(privateKey, row.config.sp_certificate as string)).toBe(true);
      const listed = await listConnections(h.service, W, globex);
      expect(JSON.stringify(listed)).not.toContain("PRIVATE KEY");
      expect(samlServiceProvider(h.service, W, samlId).acs).toBe(`${federationCallbackUri(h.service, W).replace("/federation/callback", "")}/federation/saml/acs?connection=${samlId}`);
      const event = (await audits("console.organization.connection_saved")).at(-1)!;
      expect(event.data).toMatchObject({ kind: "saml", secret_changed: true, legacy_signatures: false, legacy_signatures_changed: false, config: { idp_entity_id: "https://sts.globex.example/", idp_certificates: [new X509Certificate(idp.certificatePem).fingerprint256] } });
      expect(JSON.stringify(event.data)).not.toContain("PRIVATE KEY");
    });

    it("edits it with typed fields and a second certificate, keeps its SP key pair, and audits SHA-1 being allowed", async () => {
      const [before] = await h.service.db.select().from(enterpriseConnections).where(eq(enterpriseConnections.id, samlId));
      const out = await run(admin, "saveConnection", {
        organization_id: globex,
        connection_id: samlId,
        name: "Globex Entra",
        kind: "saml",
        active: "on",
        idp_entity_id: "https://sts.globex.example/",
        sso_url: "https://idp.globex.example/sso2",
        idp_certificate: idp.certificatePem,
        idp_certificate_next: body(next.certificatePem),
        allow_sha1: "on",
        attribute_preset: "custom",
        attribute_email: "mail",
        attribute_given_name: "givenName",
      });
      expect(out.ok).toBe(true);
      const [after] = await h.service.db.select().from(enterpriseConnections).where(eq(enterpriseConnections.id, samlId));
      expect(after.secretEncrypted).toBe(before.secretEncrypted);
      expect(after.config).toMatchObject({ sso_url: "https://idp.globex.example/sso2", idp_certificates: [idp.certificatePem, next.certificatePem], allow_sha1: true, attributes: { email: "mail", name: null, given_name: "givenName", family_name: null }, sp_certificate: before.config.sp_certificate });
      const last = (await audits("console.organization.connection_saved")).at(-1)!;
      expect(last.data).toMatchObject({ secret_changed: false, legacy_signatures: true, legacy_signatures_changed: true });
      const summary = summarizeAuditEvent({ type: last.type, actorEmail: "fed-admin@operators.test", actor: last.actor, subject: last.subject, clientId: null, reason: null, flagged: null, data: last.data as Record<string, unknown> });
      expect(summary).toBe("fed-admin@operators.test saved an enterprise connection of globex, which now accepts SHA-1 signatures");
    });

    it("fetches the metadata URL (through the outbound rules) when it changes", async () => {
      const server = createServer((_req, res) => res.writeHead(200, { "content-type": "application/samlmetadata+xml" }).end(metadata("https://fetched.globex.example/", [next.certificatePem])));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metadata`;
      try {
        const out = await run(admin, "saveConnection", { organization_id: globex, connection_id: samlId, name: "Globex Entra", kind: "saml", active: "on", metadata_url: url, attribute_preset: "entra" });
        expect(out.ok).toBe(true);
        const [row] = await h.service.db.select().from(enterpriseConnections).where(eq(enterpriseConnections.id, samlId));
        expect(row.config).toMatchObject({ idp_entity_id: "https://fetched.globex.example/", idp_certificates: [next.certificatePem], metadata_url: url, allow_sha1: false });
      } finally {
        server.close();
      }
      const gone = await run(admin, "saveConnection", { organization_id: globex, name: "Gone", kind: "saml", metadata_url: url, attribute_preset: "entra" });
      expect(gone).toMatchObject({ ok: false, fieldErrors: { metadata_url: expect.stringMatching(/could not be fetched/) } });
    });

    it("refuses what cannot work, by field, and saves nothing", async () => {
      const count = (await listConnections(h.service, W, globex)).length;
      expect(await run(admin, "saveConnection", { organization_id: globex, name: "X", kind: "saml", metadata_xml: "<not xml", attribute_preset: "entra" })).toMatchObject({ ok: false, fieldErrors: { metadata_xml: "The metadata is not well-formed XML" } });
      expect(await run(admin, "saveConnection", { organization_id: globex, name: "X", kind: "saml", metadata_xml: metadata("https://x.example/", [idp.certificatePem, next.certificatePem, generateSpKeyPair("third", new Date()).certificatePem]) })).toMatchObject({
        ok: false,
        fieldErrors: { metadata_xml: expect.stringMatching(/at most 2 are kept/) },
      });
      expect(await run(admin, "saveConnection", { organization_id: globex, name: "X", kind: "saml", idp_entity_id: "https://x.example/", sso_url: "https://x.example/sso", idp_certificate: "not a certificate" })).toMatchObject({
        ok: false,
        fieldErrors: { idp_certificate: expect.stringMatching(/not a valid X\.509 certificate/) },
      });
      expect(await run(admin, "saveConnection", { organization_id: globex, name: "X", kind: "saml", sso_url: "https://x.example/sso" })).toMatchObject({ ok: false, fieldErrors: { idp_entity_id: expect.any(String) } });
      expect(await run(admin, "saveConnection", { organization_id: globex, name: "X", kind: "saml", idp_entity_id: "e", sso_url: "http://x.example/sso", idp_certificate: idp.certificatePem })).toMatchObject({ ok: false, fieldErrors: { sso_url: expect.stringMatching(/https/) } });
      expect(await run(admin, "saveConnection", { organization_id: globex, name: "X", kind: "saml", metadata_xml: metadata("https://x.example/", [idp.certificatePem]), admission: "any_vouched" })).toMatchObject({
        ok: false,
        fieldErrors: { admission: expect.stringMatching(/verified domains only/) },
      });
      expect(await run(admin, "saveConnection", { organization_id: globex, name: "X", kind: "saml", metadata_xml: metadata("https://x.example/", [idp.certificatePem]), idp_initiated_client_id: "no-such-app" })).toMatchObject({
        ok: false,
        fieldErrors: { idp_initiated_client_id: expect.stringMatching(/application of this workspace/) },
      });
      expect((await listConnections(h.service, W, globex)).length).toBe(count);
    });

    it("reads the metadata before saving (pasted, or at its URL through the outbound rules): the fields' values, nothing stored or audited", async () => {
      const count = (await listConnections(h.service, W, globex)).length;
      const events = (await audits("console.organization.connection_saved")).length;
      const pasted = await prefillConnection(h.service, admin, W, { kind: "saml", metadata_xml: metadata("https://sts.globex.example/", [idp.certificatePem, next.certificatePem]) });
      expect(pasted).toMatchObject({
        ok: true,
        values: { metadata_xml: "", idp_entity_id: "https://sts.globex.example/", sso_url: "https://idp.globex.example/sso", idp_certificate: idp.certificatePem, idp_certificate_next: next.certificatePem },
        message: expect.stringContaining("https://sts.globex.example/"),
      });
      const server = createServer((_req, res) => res.writeHead(200, { "content-type": "application/samlmetadata+xml" }).end(metadata("https://fetched.globex.example/", [next.certificatePem])));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metadata`;
        expect(await prefillConnection(h.service, admin, W, { kind: "saml", metadata_url: url })).toMatchObject({ ok: true, values: { idp_entity_id: "https://fetched.globex.example/", idp_certificate: next.certificatePem, idp_certificate_next: "" } });
      } finally {
        server.close();
      }
      expect((await listConnections(h.service, W, globex)).length).toBe(count);
      expect((await audits("console.organization.connection_saved")).length).toBe(events);
    });

    it("refuses metadata it cannot use beside its field, never as a failure of the page", async () => {
      const prefill = (raw: Record<string, unknown>) => prefillConnection(h.service, admin, W, { kind: "saml", ...raw });
      expect(await prefill({})).toMatchObject({ ok: false, fieldErrors: { metadata_xml: expect.stringMatching(/Paste the identity provider's metadata/) } });
      expect(await prefill({ metadata_xml: "<not xml" })).toMatchObject({ ok: false, fieldErrors: { metadata_xml: "The metadata is not well-formed XML" } });
      expect(await prefill({ metadata_xml: `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${metadata("&e;", [idp.certificatePem])}` })).toMatchObject({ ok: false, fieldErrors: { metadata_xml: expect.stringMatching(/DOCTYPE/) } });
      expect(await prefill({ metadata_xml: "x".repeat(600 * 1024) })).toMatchObject({ ok: false, fieldErrors: { metadata_xml: expect.any(String) } });
      expect(await prefill({ metadata_url: "ftp://idp.example/metadata" })).toMatchObject({ ok: false, fieldErrors: { metadata_url: expect.stringMatching(/https/) } });
      expect(await prefill({ metadata_url: "http://127.0.0.1:9/metadata" })).toMatchObject({ ok: false, fieldErrors: { metadata_url: expect.stringMatching(/could not be fetched/) } });
      expect(await prefillConnection(h.service, admin, W, { kind: "oidc", issuer: "https://idp.example" })).toMatchObject({ ok: false, formError: expect.any(String) });
      await expect(prefillConnection(h.service, viewer, W, { kind: "saml", metadata_xml: metadata("https://x.example/", [idp.certificatePem]) })).rejects.toMatchObject({ code: "forbidden" });
    });

    it("is saved under the id its form was shown with (the SP addresses shown before saving), once", async () => {
      const drawn = randomUUID();
      const input = { organization_id: globex, new_connection_id: drawn, name: "Globex drawn", kind: "saml", metadata_xml: metadata("https://drawn.globex.example/", [idp.certificatePem]), attribute_preset: "common" };
      expect(await run(admin, "saveConnection", input)).toMatchObject({ ok: true, result: { id: drawn, organizationId: globex, created: true } });
      const [row] = await h.service.db.select().from(enterpriseConnections).where(eq(enterpriseConnections.id, drawn));
      expect(row.config).toMatchObject({ attribute_preset: "common", attributes: { email: "email", given_name: "firstName", family_name: "lastName" } });
      expect(await run(admin, "saveConnection", input)).toMatchObject({ ok: false, formError: expect.stringMatching(/added already/) });
      expect(await run(admin, "saveConnection", { ...input, new_connection_id: "../not-an-id" })).toMatchObject({ ok: false, fieldErrors: { new_connection_id: expect.any(String) } });
      expect(await run(admin, "saveConnection", { ...input, connection_id: drawn, new_connection_id: undefined })).toMatchObject({ ok: true, result: { id: drawn, created: false } });
    });

    it("turned into an OIDC connection, it does not keep its SP key as a client secret", async () => {
      const out = await run(admin, "saveConnection", { organization_id: globex, connection_id: samlId, name: "Globex Entra", kind: "oidc", issuer: "https://idp.globex.example", client_id: "latchkey" });
      expect(out.ok).toBe(true);
      const [row] = await h.service.db.select().from(enterpriseConnections).where(eq(enterpriseConnections.id, samlId));
      expect(row.secretEncrypted).toBeNull();
    });
  });

  it("is refused to a viewer", async () => {
    await expect(run(viewer, "saveConnection", { organization_id: acme, name: "V", kind: "oidc", issuer: "https://idp.example", client_id: "x" })).rejects.toMatchObject({ code: "forbidden" });
  });

  it("shows the callback URI to register upstream under the workspace's issuer", () => {
    expect(federationCallbackUri(h.service, W)).toBe(`https://auth.example.test/t/${W}/federation/callback`);
  });
});

describe("domains", () => {
  it("claims a domain once per workspace; another organization is told who holds it", async () => {
    const out = await run(admin, "addDomain", { organization_id: acme, domain: "ACME.example." });
    expect(out).toMatchObject({ ok: true, result: { domain: "acme.example" } });
    const taken = await run(admin, "addDomain", { organization_id: globex, domain: "acme.example" });
    expect(taken).toMatchObject({ ok: false, fieldErrors: { domain: expect.stringContaining("organization acme") } });
    const invalid = await run(admin, "addDomain", { organization_id: globex, domain: "com" });
    expect(invalid).toMatchObject({ ok: false, fieldErrors: { domain: expect.stringContaining("top-level") } });
    expect(await listDomains(h.service.db, W, globex)).toEqual([]);
    expect(await audits("console.organization.domain_claimed")).toHaveLength(1);
  });

  it("Check DNS: not found yet is a message (nothing written, no audit); the TXT record verifies it by DNS, audited", async () => {
    const [d] = await listDomains(h.service.db, W, acme);
    const asked: string[] = [];
    domainDns.resolveTxt = async (name) => {
      asked.push(name);
      throw Object.assign(new Error("nxdomain"), { code: "ENOTFOUND" });
    };
    const missing = await run(admin, "checkDomainDns", { organization_id: acme, domain_id: d.id, domain: d.domain });
    expect(missing).toMatchObject({ ok: false, formError: expect.stringContaining("Not found yet: no TXT record at _latchkey.acme.example") });
    expect(asked).toEqual(["_latchkey.acme.example"]);
    expect((await listDomains(h.service.db, W, acme))[0].verifiedAt).toBeNull();
    expect(await audits("console.organization.domain_verified")).toHaveLength(0);

    // A form naming another domain than the claim's does not verify the claim.
    domainDns.resolveTxt = async () => [[txtRecordFor(d).value]];
    const forged = await run(admin, "checkDomainDns", { organization_id: acme, domain_id: d.id, domain: "attacker.example" });
    expect(forged).toMatchObject({ ok: false, formError: expect.stringContaining("reload") });

    const found = await run(admin, "checkDomainDns", { organization_id: acme, domain_id: d.id, domain: d.domain });
    expect(found).toMatchObject({ ok: true, result: { verified: true } });
    const [row] = await h.service.db.select().from(organizationDomains).where(eq(organizationDomains.id, d.id));
    expect(row).toMatchObject({ verificationMethod: "dns", verifiedAt: h.clock.now() });
    const events = await audits("console.organization.domain_verified");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ subject: "acme", ip: "192.0.2.9", data: { domain: "acme.example", method: "dns", operator: "fed-admin@operators.test" } });
  });

  it("Mark verified: an operator's word, audited as such; refused when already verified", async () => {
    const added = await run(admin, "addDomain", { organization_id: globex, domain: "globex.example" });
    const domainId = (added as { result: { id: string } }).result.id;
    const marked = await run(admin, "markDomainVerified", { organization_id: globex, domain_id: domainId });
    expect(marked.ok).toBe(true);
    const [row] = await h.service.db.select().from(organizationDomains).where(eq(organizationDomains.id, domainId));
    expect(row.verificationMethod).toBe("operator");
    const events = (await audits("console.organization.domain_verified")).filter((e) => e.subject === "globex");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor: expect.any(String), data: { domain: "globex.example", method: "operator" } });
    expect(await run(admin, "markDomainVerified", { organization_id: globex, domain_id: domainId })).toMatchObject({ ok: false, formError: expect.stringContaining("verified already") });
    // Not through another organization.
    expect(await run(admin, "removeDomain", { organization_id: acme, domain_id: domainId })).toMatchObject({ ok: false });
  });

  it("removes a claim, audited, and a viewer may not", async () => {
    const [d] = await listDomains(h.service.db, W, globex);
    await expect(run(viewer, "removeDomain", { organization_id: globex, domain_id: d.id })).rejects.toMatchObject({ code: "forbidden" });
    expect(await run(admin, "removeDomain", { organization_id: globex, domain_id: d.id })).toMatchObject({ ok: true });
    expect(await listDomains(h.service.db, W, globex)).toEqual([]);
    const [event] = await audits("console.organization.domain_removed");
    expect(event.data).toMatchObject({ domain: "globex.example", was_verified: "operator" });
  });
});
