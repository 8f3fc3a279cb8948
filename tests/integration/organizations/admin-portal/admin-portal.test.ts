/**
 * An organization's admin portal (lib/organizations/admin-portal): setup links made by a
 * workspace administrator (shown once, one address, used once to start, expiring, revocable), the
 * mailbox proven by a code before the portal opens, the portal's changes scoped to its
 * organization and recorded under the person, organization administrators entering with their
 * hosted session, and what the portal never reaches.
 */
import { and, desc, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, enterpriseConnections, federationTransactions, organizationDomains, organizationMembers, organizationPortalLinks, organizations, scimDirectories, scimTokens } from "../../../../db/schema";
import { ensureSystemWorkspace } from "../../../../lib/console/system";
import { operations } from "../../../../lib/console/registry";
import { HOUR } from "../../../../lib/clock";
import { PORTAL_CHANGES } from "../../../../lib/audit/catalogue";
import { startSession } from "../../../../lib/organizations/admin-portal/links";
import { entryView, listLinks, PORTAL_OPERATIONS, portalEntry, runPortalOperation, type PortalAccess } from "../../../../lib/organizations/admin-portal";
import { call, PUBLIC_URL, seed, signIn, uniqueWorkspaceId, type Harness } from "../../../helpers/harness";
import { ACME, ADA, authzWorkspace, BOB, GLOBEX, SPA } from "../../../helpers/fixtures";
import { OUTBOX, outboxFor } from "../../../helpers/factors/email";
import { workspaceContext } from "../../../helpers/factors/sign-in";
import { samlIdpStandin } from "../../../helpers/federation/saml-idp-standin";
import { addSamlConnection } from "../../../helpers/federation/setup";
import { adminAndViewer, createConsoleHarness, runRegistered } from "../../console-helpers";

let h: Harness;
const W = uniqueWorkspaceId("portal");
const OTHER_W = uniqueWorkspaceId("portalx");
let admin: string;
let viewer: string;
const orgs = new Map<string, string>();

const DOC = {
  id: W,
  name: "Portal workspace",
  roles: [{ name: "reader" }],
  users: [{ email: "ann@acme.example", email_verified: true }],
  organizations: [
    { slug: "acme", name: "Acme", members: ["ann@acme.example"], administrators: ["ann@acme.example"] },
    { slug: "globex", name: "Globex", members: [] },
  ],
};

beforeAll(async () => {
  h = await createConsoleHarness({ mail: OUTBOX });
  await seed(h, DOC);
  await seed(h, { id: OTHER_W, name: "Other", organizations: [{ slug: "acme", name: "Other Acme", members: [] }] });
  await ensureSystemWorkspace(h.service);
  ({ admin, viewer } = await adminAndViewer(h, W, "portal.operators.test"));
  for (const o of await h.service.db.select().from(organizations).where(eq(organizations.workspaceId, W))) orgs.set(o.slug, o.id);
});

const latest = async (type: string) => (await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, type))).orderBy(desc(auditEvents.createdAt)).limit(1))[0];

/** A setup link made in the console; returns its secret (from the URL shown once). */
/** Each link's address (each test's own: a code's cooldown and send limits are per address). */
const addressOf = new Map<string, string>();
let made = 0;

async function makeLink(slug = "acme", email = `IT${++made}@Acme.example`, more: Record<string, string> = {}): Promise<string> {
  const made = await runRegistered(h, admin, W, "createPortalLink", { organization_id: orgs.get(slug)!, email, valid_hours: "24", ...more });
  expect(made).toMatchObject({ ok: true });
  const url = new URL((made as { result: { url: string } }).result.url);
  expect(url.origin + url.pathname).toBe(`${PUBLIC_URL}/t/${W}/organization-admin`);
  const token = url.searchParams.get("link")!;
  addressOf.set(token, email.toLowerCase());
  return token;
}

async function csrfOf(token: string): Promise<string> {
  const view = await entryView(await workspaceContext(h, W), { link: token });
  if (view.kind !== "link") throw new Error("the link is not usable");
  return view.csrf;
}

const post = async (path: string, form: Record<string, string>, cookie?: string) =>
  call(h, `/t/${W}/organization-admin/${path}`, { form, headers: { origin: PUBLIC_URL }, ...(cookie ? { cookie } : {}) });

/** Asks for a code and reads it from the outbox. */
async function codeFor(token: string, address: string): Promise<string> {
  const res = await post("code", { link: token, csrf: await csrfOf(token) });
  expect(res.status).toBe(303);
  expect(res.headers.get("location")).toContain("sent=1");
  const [message] = await outboxFor(h, W, address);
  return /Your code is (\d{6})/.exec(message.text)![1];
}

/** Proves the mailbox and returns the portal's cookie. */
async function enter(token: string): Promise<string> {
  const code = await codeFor(token, addressOf.get(token)!);
  const res = await post("start", { link: token, csrf: await csrfOf(token), code });
  expect(res.status).toBe(303);
  const cookie = res.headers.get("set-cookie")!;
  expect(cookie).toMatch(/^lk_org_portal=[^;]+; Path=\/t\/[^/]+\/organization-admin; Secure; HttpOnly; SameSite=Lax/);
  return cookie.split(";")[0];
}

async function accessOf(cookie: string, workspace = W): Promise<PortalAccess | null> {
  const entry = await portalEntry(await workspaceContext(h, workspace), cookie);
  return entry.kind === "portal" ? entry.access : null;
}

describe("setup links", () => {
  it("are made by workspace administrators only, stored as a hash, shown once and mailed when asked", async () => {
    expect(await runRegistered(h, viewer, W, "createPortalLink", { organization_id: orgs.get("acme")!, email: "x@acme.example" }).catch((e: Error) => e.message)).toMatch(/viewer/i);
    const token = await makeLink("acme", "Mailed@Acme.example", { send: "on" });
    const [row] = await h.service.db.select().from(organizationPortalLinks).where(eq(organizationPortalLinks.emailNormalized, "mailed@acme.example"));
    expect(row.tokenHash).not.toContain(token);
    expect(JSON.stringify(row)).not.toContain(token);
    const [message] = await outboxFor(h, W, "mailed@acme.example");
    expect(message.text).toContain(`/t/${W}/organization-admin?link=${encodeURIComponent(token)}`);
    expect(await latest("console.organization.portal_link_created")).toMatchObject({ subject: "acme", data: { email: "Mailed@Acme.example", emailed: true } });
  });

  it("open nothing without the code sent to the link's address; opening the page changes nothing", async () => {
    const token = await makeLink();
    const view = await entryView(await workspaceContext(h, W), { link: token });
    expect(view).toMatchObject({ kind: "link", organization: "Acme", address: "i•••@acme.example" });
    expect(view.kind === "link" && view.address).not.toContain(addressOf.get(token)!.split("@")[0]);
    const wrong = await post("start", { link: token, csrf: await csrfOf(token), code: "000000" });
    expect(wrong.status).toBe(303);
    expect(wrong.headers.get("set-cookie")).toBeNull();
    // A code sent to the address of another link does not open this one.
    const other = await makeLink("acme", "other@acme.example");
    const otherCode = await codeFor(other, "other@acme.example");
    const crossed = await post("start", { link: token, csrf: await csrfOf(token), code: otherCode });
    expect(crossed.headers.get("set-cookie")).toBeNull();
    // Without the page's CSRF token nothing is sent.
    expect((await post("code", { link: token, csrf: "forged" })).status).toBe(403);
    // The link is still unused.
    const [row] = await h.service.db.select().from(organizationPortalLinks).where(eq(organizationPortalLinks.emailNormalized, addressOf.get(token)!));
    expect(row.startedAt).toBeNull();
  });

  it("start the portal once: the right code opens it, and the used link never again", async () => {
    const token = await makeLink();
    const cookie = await enter(token);
    const access = await accessOf(cookie);
    expect(access).toMatchObject({ organization: { slug: "acme" }, person: { via: "setup_link", email: addressOf.get(token) } });
    expect(await latest("organization_portal.started")).toMatchObject({ subject: addressOf.get(token) });
    expect(await entryView(await workspaceContext(h, W), { link: token })).toEqual({ kind: "unavailable" });
    // The used link starts no second session, whatever proof came with it.
    const [used] = await h.service.db.select().from(organizationPortalLinks).where(eq(organizationPortalLinks.emailNormalized, addressOf.get(token)!));
    expect(await startSession(h.service.db, used, h.clock.now())).toBeNull();
    const again = await post("code", { link: token, csrf: "x" });
    expect(again.status).toBe(404);
    expect(await again.text()).toContain("This setup link cannot be used");
  });

  it("of parallel starts with the right code, exactly one opens the portal", async () => {
    const token = await makeLink();
    const code = await codeFor(token, addressOf.get(token)!);
    const csrf = await csrfOf(token);
    const answers = await Promise.all(Array.from({ length: 6 }, () => post("start", { link: token, csrf, code })));
    expect(answers.filter((r) => r.headers.get("set-cookie")?.startsWith("lk_org_portal=")).length).toBe(1);
  });

  it("revoking one ends the portal it opened at once", async () => {
    const token = await makeLink();
    const cookie = await enter(token);
    const [row] = await h.service.db.select().from(organizationPortalLinks).where(eq(organizationPortalLinks.emailNormalized, addressOf.get(token)!));
    expect((await listLinks(h.service.db, W, orgs.get("acme")!, h.clock.now())).find((l) => l.id === row.id)).toMatchObject({ state: "used", liveSessions: 1 });
    const revoked = await runRegistered(h, admin, W, "revokePortalLink", { organization_id: orgs.get("acme")!, link_id: row.id });
    expect(revoked).toMatchObject({ ok: true });
    expect(await latest("console.organization.portal_link_revoked")).toMatchObject({ data: { sessions_ended: 1 } });
    expect(await accessOf(cookie)).toBeNull();

  });

  it("a link revoked by any path ends its session's access: the session is checked against its link", async () => {
    const token = await makeLink();
    const cookie = await enter(token);
    await h.service.db.update(organizationPortalLinks).set({ revokedAt: h.clock.now() }).where(eq(organizationPortalLinks.emailNormalized, addressOf.get(token)!));
    expect(await accessOf(cookie)).toBeNull();
  });

  it("reach only their workspace: the cookie is nothing in another", async () => {
    const cookie = await enter(await makeLink());
    expect(await accessOf(cookie)).not.toBeNull();
    expect(await accessOf(cookie, OTHER_W)).toBeNull();
  });
});

describe("the portal's changes", () => {
  it("run only the declared operations, each the console's operation of that name", () => {
    for (const [name, declared] of Object.entries(PORTAL_OPERATIONS)) {
      expect(PORTAL_CHANGES).toContain(declared.change);
      expect((operations as Record<string, { name: string }>)[name].name).toBe(`organization.${declared.change}`);
    }
  });

  it("apply to the portal's organization whatever the form names, recorded under the person", async () => {
    const token = await makeLink();
    const access = (await accessOf(await enter(token)))!;
    // The form names Globex: the domain is claimed for Acme, the portal's organization.
    const claimed = await runPortalOperation(h.service, access, "addDomain", operations.addDomain, { organization_id: orgs.get("globex")!, domain: "acme-it.example" }, { ip: null });
    expect(claimed).toMatchObject({ ok: true });
    const [domain] = await h.service.db.select().from(organizationDomains).where(and(eq(organizationDomains.workspaceId, W), eq(organizationDomains.domain, "acme-it.example")));
    expect(domain.organizationId).toBe(orgs.get("acme"));
    const event = await latest("organization_portal.domain_claimed");
    expect(event).toMatchObject({ subject: "acme", data: { operator: addressOf.get(token), role: "admin portal (setup link)", domain: "acme-it.example" } });
    expect(event.actor).toBe(`portal:${access.person.via === "setup_link" ? access.person.sessionId : ""}`);

    const saved = await runPortalOperation(h.service, access, "saveConnection", operations.saveConnection, {
      organization_id: orgs.get("globex")!,
      name: "Acme IdP",
      kind: "oidc",
      issuer: "https://idp.acme-it.example",
      client_id: "latchkey",
      client_secret: "upstream secret 0123456789",
      active: "on",
    }, { ip: null });
    expect(saved).toMatchObject({ ok: true });
    const [connection] = await h.service.db.select().from(enterpriseConnections).where(and(eq(enterpriseConnections.workspaceId, W), eq(enterpriseConnections.name, "Acme IdP")));
    expect(connection.organizationId).toBe(orgs.get("acme"));

    const directory = await runPortalOperation(h.service, access, "saveDirectorySettings", operations.saveDirectorySettings, { organization_id: orgs.get("globex")!, enabled: "on", connection_id: connection.id, subject_attribute: "externalId", group_roles: "" }, { ip: null });
    expect(directory).toMatchObject({ ok: true });
    const issued = await runPortalOperation(h.service, access, "issueScimToken", operations.issueScimToken, { organization_id: orgs.get("globex")!, overlap_hours: "0" }, { ip: null });
    expect(issued).toMatchObject({ ok: true });
    const directories = await h.service.db.select().from(scimDirectories).where(eq(scimDirectories.workspaceId, W));
    expect(directories.map((d) => d.organizationId)).toEqual([orgs.get("acme")]);
    expect((await h.service.db.select().from(scimTokens).where(eq(scimTokens.directoryId, directories[0].id))).length).toBe(1);
  });

  it("test the organization's connection, the result linking back to the portal's page of the organization", async () => {
    const connection = await addSamlConnection(h, W, { organization: "acme", idp: samlIdpStandin(), name: "Acme SAML" });
    const access = (await accessOf(await enter(await makeLink())))!;
    // The form names Globex's organization: the test is still of an Acme connection, and another organization's is refused.
    const started = await runPortalOperation<{ location: string }>(h.service, access, "testConnection", operations.testConnection, { organization_id: orgs.get("globex")!, connection_id: connection.id }, { ip: null });
    expect(started).toMatchObject({ ok: true });
    const relayState = new URL((started as { result: { location: string } }).result.location).searchParams.get("RelayState");
    expect(relayState).toBeTruthy();
    const [trip] = await h.service.db.select().from(federationTransactions).where(and(eq(federationTransactions.workspaceId, W), eq(federationTransactions.connectionId, connection.id)));
    expect(trip).toMatchObject({ purpose: "test", tester: { kind: "organization_portal", email: access.person.email, back: `${PUBLIC_URL}/t/${W}/organization-admin?organization=acme` } });
    expect((await latest("organization_portal.connection_test_started")).data).toMatchObject({ operator: access.person.email, connection_id: connection.id });
  });

  it("refuse what the portal does not run: another operation, or an invitation by a setup link's holder", async () => {
    const access = (await accessOf(await enter(await makeLink())))!;
    expect(await runPortalOperation(h.service, access, "updateOrganization", operations.updateOrganization, { organization_id: orgs.get("acme")!, name: "Hacked", active: "on" }, { ip: null })).toMatchObject({ ok: false });
    expect(await runPortalOperation(h.service, access, "markDomainVerified", operations.markDomainVerified, { organization_id: orgs.get("acme")!, domain_id: "x" }, { ip: null })).toMatchObject({ ok: false });
    expect(await runPortalOperation(h.service, access, "inviteOrganizationMember", operations.inviteOrganizationMember, { organization_id: orgs.get("acme")!, email: "new@acme.example" }, { ip: null })).toMatchObject({ ok: false });
    // A name with another operation's function is refused outright.
    await expect(runPortalOperation(h.service, access, "addDomain", operations.removeDomain, { domain_id: "x" }, { ip: null })).rejects.toThrow(TypeError);
    const [org] = await h.service.db.select().from(organizations).where(eq(organizations.id, orgs.get("acme")!));
    expect(org.name).toBe("Acme");
  });
});

describe("an organization's administrators", () => {
  it("enter with their hosted session, only the organizations they administer, and may invite", async () => {
    const A = uniqueWorkspaceId("portaladm");
    const doc = authzWorkspace(A);
    (doc.organizations[0] as { administrators?: string[] }).administrators = [ADA.email];
    await seed(h, doc);
    const { jar } = await signIn(h, A, { ...SPA, email: ADA.email, password: ADA.password });
    const ctx = await workspaceContext(h, A);
    const entry = await portalEntry(ctx, jar.header());
    expect(entry).toMatchObject({ kind: "portal", access: { organization: { slug: ACME }, person: { via: "organization_administrator", email: ADA.email } } });
    // Globex, of which Ada is only a member, is not hers to enter.
    expect(await portalEntry(ctx, jar.header(), GLOBEX)).toMatchObject({ kind: "portal", access: { organization: { slug: ACME } } });
    // Bob administers nothing.
    const bob = await signIn(h, A, { ...SPA, email: BOB.email, password: BOB.password });
    expect(await portalEntry(ctx, bob.jar.header())).toEqual({ kind: "none" });
    // Nor does a stranger's cookie, nor another workspace's session.
    expect(await portalEntry(await workspaceContext(h, W), jar.header())).toEqual({ kind: "none" });

    if (entry.kind !== "portal") return;
    const invited = await runPortalOperation(h.service, entry.access, "inviteOrganizationMember", operations.inviteOrganizationMember, { organization_id: "ignored", email: "new@acme.example" }, { ip: null });
    expect(invited).toMatchObject({ ok: true });
    const [event] = await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, A), eq(auditEvents.type, "organization_portal.member_invited")));
    expect(event).toMatchObject({ subject: ACME, data: { operator: ADA.email, role: "organization administrator", email: "new@acme.example" } });
    expect((event.data as { effects: { data: { by: string } }[] }).effects[0].data.by).toBe("organization_administrator");

    // No longer an administrator: the next change is refused inside its transaction.
    await h.service.db.update(organizationMembers).set({ administrator: false }).where(eq(organizationMembers.workspaceId, A));
    expect(await runPortalOperation(h.service, entry.access, "inviteOrganizationMember", operations.inviteOrganizationMember, { email: "late@acme.example" }, { ip: null })).toMatchObject({ ok: false });
    expect(await portalEntry(ctx, jar.header())).toEqual({ kind: "none" });
  });
});

describe("time", () => {
  // Last: the clock moves past the console's sessions too.
  it("ends an unused link at its expiry, and a portal session after an idle hour", async () => {
    const expiring = await makeLink();
    const cookie = await enter(await makeLink());
    h.clock.advance(61 * 60_000);
    expect(await accessOf(cookie)).toBeNull();
    h.clock.advance(24 * HOUR);
    expect(await entryView(await workspaceContext(h, W), { link: expiring })).toEqual({ kind: "unavailable" });
  });
});
