/**
 * Organization invitations (lib/organizations/invitations): inviting, sending again, the link as
 * the proof of the mailbox, accepting with an existing account (verified, or not: the rule of
 * credentials set before the proof), with a new account (a password, or the organization's single
 * sign-on), the links that cannot be used, an organization administrator's authority, the limits,
 * the audit events and the retention.
 */
import { and, desc, eq, inArray } from "drizzle-orm";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { auditEvents, enterpriseConnections, hostedSessions, organizationInvitations, organizationMembers, organizations, userRoles, users } from "../../../../db/schema";
import { verifyPassword } from "../../../../lib/authn/password";
import { DAY } from "../../../../lib/clock";
import { ConsoleInputError } from "../../../../lib/surfaces/operation";
import { purgeRetained } from "../../../../lib/features/purge";
import { loadConnection } from "../../../../lib/federation/providers";
import { resolveIdentity } from "../../../../lib/federation/identities";
import { invitationView, type InvitationView } from "../../../../lib/organizations/invitations/acceptance";
import {
  allowInvitationSend,
  INVITATION_TTL_MS,
  inviteToOrganization,
  isOrganizationAdministrator,
  listPendingInvitations,
  resendInvitation,
  setOrganizationAdministrator,
  withdrawInvitation,
  type InvitationActor,
} from "../../../../lib/organizations/invitations";
import { ACME, ADA, authzWorkspace, BOB, GLOBEX, SPA } from "../../../helpers/fixtures";
import { call, createHarness, PUBLIC_URL, seed, signIn, uniqueWorkspaceId, type Harness } from "../../../helpers/harness";
import { OUTBOX, outboxFor } from "../../../helpers/factors/email";
import { workspaceContext } from "../../../helpers/factors/sign-in";
import { addConnection, addDomain, roleIdsOf } from "../../../helpers/federation/setup";

let h: Harness;
const ws = uniqueWorkspaceId("orginv");
const INITECH = "initech";
const OPERATOR: InvitationActor = { kind: "operator", userId: "operator-1" };
const ids = new Map<string, string>();
const org = (slug: string) => ids.get(slug)!;

beforeAll(async () => {
  h = await createHarness({ mail: OUTBOX });
  const doc = authzWorkspace(ws);
  doc.organizations.push({ slug: INITECH, name: "Initech", members: [] });
  await seed(h, doc);
  for (const o of await h.service.db.select().from(organizations).where(eq(organizations.workspaceId, ws))) ids.set(o.slug, o.id);
  // Acme signs its people in through its own connection, for addresses in acme-sso.test.
  await addConnection(h, ws, { organization: ACME, issuer: "https://idp.acme-sso.test", clientId: "latchkey", clientSecret: "upstream secret 0123456789" });
  await addDomain(h, ws, { organization: ACME, domain: "acme-sso.test", verified: true });
});

/** As a page of the organization's administrators would: the send counted, then the invitation in one transaction. */
async function invite(slug: string, email: string, more: { roles?: string[]; administrator?: boolean; actor?: InvitationActor; clientId?: string } = {}) {
  const allowance = await allowInvitationSend(h.service, { workspaceId: ws, organizationId: org(slug), actor: more.actor ?? OPERATOR });
  return h.service.db.transaction(async (tx) =>
    inviteToOrganization(h.service, tx, {
      workspaceId: ws,
      organizationId: org(slug),
      actor: more.actor ?? OPERATOR,
      email,
      roleIds: more.roles ?? [],
      administrator: more.administrator ?? false,
      clientId: more.clientId ?? null,
    }, allowance),
  );
}

/** The link's secret in the newest message to `address`. */
async function tokenMailedTo(address: string): Promise<string> {
  const [message] = await outboxFor(h, ws, address);
  const link = /https:\/\/\S+\/invitation\?token=(\S+)/.exec(message.text);
  if (!link) throw new Error(`no invitation link was mailed to ${address}`);
  expect(link[0].startsWith(`${PUBLIC_URL}/t/${ws}/invitation?token=`)).toBe(true);
  return decodeURIComponent(link[1]);
}

async function view(token: string): Promise<InvitationView> {
  return invitationView(await workspaceContext(h, ws), { token });
}

/** Posts the page's form (its CSRF token read from the page's view). */
async function accept(token: string, form: Record<string, string> = {}, csrf?: string): Promise<Response> {
  const v = await view(token);
  return call(h, `/t/${ws}/invitation/accept`, { form: { token, csrf: csrf ?? (v.kind === "accept" ? v.csrf : "none"), ...form }, headers: { origin: PUBLIC_URL } });
}

/** The confirmation the accepted post redirects to. */
async function confirmation(res: Response): Promise<InvitationView> {
  expect(res.status).toBe(303);
  const url = new URL(res.headers.get("location")!, PUBLIC_URL);
  return invitationView(await workspaceContext(h, ws), { done: url.searchParams.get("done") ?? "" });
}

async function expectUnavailable(res: Response): Promise<void> {
  expect(res.status).toBe(404);
  expect(await res.text()).toContain("This invitation cannot be used");
}

const userOf = async (email: string) => (await h.service.db.select().from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, email.toLowerCase()))))[0];
const membershipOf = async (slug: string, userId: string) =>
  (await h.service.db.select().from(organizationMembers).where(and(eq(organizationMembers.workspaceId, ws), eq(organizationMembers.organizationId, org(slug)), eq(organizationMembers.userId, userId))))[0];
const invitationRow = async (id: string) => (await h.service.db.select().from(organizationInvitations).where(eq(organizationInvitations.id, id)))[0];
const events = (type: string) => h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, ws), eq(auditEvents.type, type))).orderBy(desc(auditEvents.createdAt));

describe("inviting", () => {
  it("mails a link to the address only, stores only its SHA-256, makes no account, and opening it changes nothing", async () => {
    const sent = await invite(INITECH, "Newcomer@Example.test");
    expect(sent.emailed).toBe(true);
    const token = await tokenMailedTo("newcomer@example.test");
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const row = await invitationRow(sent.invitationId);
    expect(row.emailNormalized).toBe("newcomer@example.test");
    expect(row.tokenHash).not.toContain(token);
    expect(row.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.expiresAt.getTime() - row.sentAt.getTime()).toBe(7 * DAY);
    expect(INVITATION_TTL_MS).toBe(7 * DAY);
    expect(await userOf("newcomer@example.test")).toBeUndefined();
    // Mail scanners open links: the page only reads.
    for (let i = 0; i < 3; i++) expect((await view(token)).kind).toBe("accept");
    expect((await invitationRow(sent.invitationId)).state).toBe("pending");
    expect(await userOf("newcomer@example.test")).toBeUndefined();
  });

  it("inviting again replaces the pending invitation: one row, a new link, the old one dead", async () => {
    const first = await invite(INITECH, "again@example.test");
    const oldToken = await tokenMailedTo("again@example.test");
    h.clock.advance(1000);
    const second = await invite(INITECH, "again@example.test", { roles: await roleIdsOf(h, ws, ["reader"]) });
    expect(second.invitationId).toBe(first.invitationId);
    expect(second.replaced).toBe(true);
    const newToken = await tokenMailedTo("again@example.test");
    expect(newToken).not.toBe(oldToken);
    expect((await view(oldToken)).kind).toBe("unavailable");
    await expectUnavailable(await accept(oldToken, { password: "a long enough password 1" }));
    expect((await view(newToken)).kind).toBe("accept");
    const pending = await h.service.db.select().from(organizationInvitations).where(and(eq(organizationInvitations.workspaceId, ws), eq(organizationInvitations.emailNormalized, "again@example.test")));
    expect(pending).toHaveLength(1);
  });

  it("sending again makes a new link and kills the old one", async () => {
    const sent = await invite(INITECH, "resend@example.test");
    const oldToken = await tokenMailedTo("resend@example.test");
    h.clock.advance(1000);
    const allowance = await allowInvitationSend(h.service, { workspaceId: ws, organizationId: org(INITECH), actor: OPERATOR });
    await h.service.db.transaction((tx) => resendInvitation(h.service, tx, { workspaceId: ws, organizationId: org(INITECH), invitationId: sent.invitationId, actor: OPERATOR }, allowance));
    const newToken = await tokenMailedTo("resend@example.test");
    expect(newToken).not.toBe(oldToken);
    expect((await view(oldToken)).kind).toBe("unavailable");
    expect((await view(newToken)).kind).toBe("accept");
    expect((await events("organization.invitation_resent"))[0]).toMatchObject({ subject: "resend@example.test", data: { invitation_id: sent.invitationId, by: "operator" } });
  });

  it("refuses an existing member beside the address field, and roles that are not the workspace's", async () => {
    const member = invite(GLOBEX, BOB.email.toUpperCase());
    await expect(member).rejects.toBeInstanceOf(ConsoleInputError);
    await expect(member).rejects.toMatchObject({ fieldErrors: { email: "This address is already a member of the organization" } });
    await expect(invite(INITECH, "roles@example.test", { roles: ["not-a-role"] })).rejects.toMatchObject({ fieldErrors: { role_ids: expect.any(String) } });
  });
});

describe("accepting", () => {
  it("an existing verified account joins with the invitation's roles and administrator flag; its password stays", async () => {
    const reader = await roleIdsOf(h, ws, ["reader"]);
    const sent = await invite(INITECH, ADA.email, { roles: reader, administrator: true });
    const token = await tokenMailedTo(ADA.email);
    const v = await view(token);
    expect(v).toMatchObject({ kind: "accept", organization: "Initech", way: "existing", administrator: true });
    const done = await confirmation(await accept(token));
    expect(done).toMatchObject({ kind: "accepted", organization: "Initech", passwordDiscarded: false });
    const ada = await userOf(ADA.email);
    expect(await verifyPassword(ada.passwordHash!, ADA.password)).toBe(true);
    expect(await membershipOf(INITECH, ada.id)).toMatchObject({ origin: "invitation", administrator: true });
    expect(await isOrganizationAdministrator(h.service.db, ws, org(INITECH), ada.id)).toBe(true);
    const held = await h.service.db.select().from(userRoles).where(and(eq(userRoles.workspaceId, ws), eq(userRoles.userId, ada.id), eq(userRoles.organizationId, org(INITECH))));
    expect(held.map((r) => r.roleId)).toEqual(reader);
    expect(await invitationRow(sent.invitationId)).toMatchObject({ state: "accepted", acceptedBy: ada.id });
    expect((await events("organization.invitation_accepted")).find((e) => e.subject === ada.id)).toMatchObject({ subject: ada.id, data: { invitation_id: sent.invitationId, account: "existing", administrator: true, password_discarded: false } });
    // Used once: the page no longer offers it, and a post is refused.
    expect((await view(token)).kind).toBe("unavailable");
    await expectUnavailable(await accept(token));
  });

  it("an existing unverified account: the link proves the mailbox, so the password set before it is discarded and its sessions end", async () => {
    const bob = await userOf(BOB.email);
    expect(bob.emailVerified).toBe(false);
    await signIn(h, ws, { ...SPA, email: BOB.email, password: BOB.password });
    const live = await h.service.db.select().from(hostedSessions).where(and(eq(hostedSessions.workspaceId, ws), eq(hostedSessions.userId, bob.id)));
    expect(live.some((s) => s.endedAt === null)).toBe(true);

    await invite(INITECH, BOB.email);
    const done = await confirmation(await accept(await tokenMailedTo(BOB.email)));
    expect(done).toMatchObject({ kind: "accepted", passwordDiscarded: true });
    const after = await userOf(BOB.email);
    expect(after).toMatchObject({ emailVerified: true, passwordHash: null });
    const sessions = await h.service.db.select().from(hostedSessions).where(and(eq(hostedSessions.workspaceId, ws), eq(hostedSessions.userId, bob.id)));
    expect(sessions.every((s) => s.endedAt !== null && s.endReason === "mailbox_proven")).toBe(true);
    await expect(signIn(h, ws, { ...SPA, email: BOB.email, password: BOB.password })).rejects.toThrow();
    expect((await events("user.password_discarded")).find((e) => e.subject === bob.id)).toMatchObject({ subject: bob.id });
    expect(await membershipOf(INITECH, bob.id)).toMatchObject({ origin: "invitation", administrator: false });
  });

  it("no account: it is made on accepting, verified, with the password the invitee chose (screened like any new password)", async () => {
    await invite(INITECH, "Nora@Example.test");
    const token = await tokenMailedTo("nora@example.test");
    expect(await view(token)).toMatchObject({ kind: "accept", way: "password" });
    const weak = await accept(token, { password: "short" });
    expect(weak.status).toBe(303);
    expect(weak.headers.get("location")).toContain("error=weak_password");
    expect(await userOf("nora@example.test")).toBeUndefined();
    const done = await confirmation(await accept(token, { password: "nora's own long password" }));
    expect(done).toMatchObject({ kind: "accepted", organization: "Initech", email: "Nora@Example.test", sso: false });
    const nora = await userOf("nora@example.test");
    expect(nora).toMatchObject({ emailVerified: true, status: "active" });
    expect(await verifyPassword(nora.passwordHash!, "nora's own long password")).toBe(true);
    expect(await membershipOf(INITECH, nora.id)).toMatchObject({ origin: "invitation" });
    expect((await events("user.created")).find((e) => e.subject === nora.id)).toMatchObject({ subject: nora.id, data: { via: "organization_invitation" } });
    // The new account signs in with it.
    await signIn(h, ws, { ...SPA, email: "nora@example.test", password: "nora's own long password" });
  });

  it("an address of a domain with the organization's single sign-on: no password is offered or set; the connection's sign-in finds the account", async () => {
    await invite(ACME, "sam@acme-sso.test");
    const token = await tokenMailedTo("sam@acme-sso.test");
    expect(await view(token)).toMatchObject({ kind: "accept", way: "sso", passwordOptional: false });
    // A password sent anyway is not set.
    const done = await confirmation(await accept(token, { password: "a password nobody offered" }));
    expect(done).toMatchObject({ kind: "accepted", sso: true });
    const sam = await userOf("sam@acme-sso.test");
    expect(sam).toMatchObject({ emailVerified: true, passwordHash: null });
    expect(await membershipOf(ACME, sam.id)).toMatchObject({ origin: "invitation" });

    // The first sign-in through Acme's connection links to this account (after the user proves it), never a second account.
    const ctx = await workspaceContext(h, ws);
    const [connection] = await h.service.db.select().from(enterpriseConnections).where(eq(enterpriseConnections.workspaceId, ws));
    const loaded = (await loadConnection(ctx, connection.id))!;
    const resolution = await resolveIdentity(ctx, loaded, { issuer: "https://idp.acme-sso.test", subject: "sam-upstream", email: "Sam@acme-sso.test", emailVerified: true, name: "Sam", amr: [], acr: null });
    expect(resolution).toMatchObject({ kind: "link", link: { userId: sam.id, organizationId: org(ACME) } });
    expect(await h.service.db.select().from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, "sam@acme-sso.test")))).toHaveLength(1);
  });

  it("withdrawn, expired, used and unknown links, and an inactive organization's, are refused alike", async () => {
    const withdrawn = await invite(INITECH, "withdrawn@example.test");
    const withdrawnToken = await tokenMailedTo("withdrawn@example.test");
    await h.service.db.transaction((tx) => withdrawInvitation(h.service, tx, { workspaceId: ws, organizationId: org(INITECH), invitationId: withdrawn.invitationId, actor: OPERATOR }));
    expect((await view(withdrawnToken)).kind).toBe("unavailable");

    await invite(INITECH, "expired@example.test");
    const expiredToken = await tokenMailedTo("expired@example.test");

    await invite(INITECH, "used@example.test");
    const usedToken = await tokenMailedTo("used@example.test");
    await confirmation(await accept(usedToken, { password: "used's long password 1" }));

    await invite(GLOBEX, "inactive@example.test");
    const inactiveToken = await tokenMailedTo("inactive@example.test");
    const liveCsrf = ((await view(inactiveToken)) as { csrf: string }).csrf;
    await h.service.db.update(organizations).set({ active: false }).where(eq(organizations.id, org(GLOBEX)));
    try {
      h.clock.advance(INVITATION_TTL_MS);
      const bodies: string[] = [];
      for (const token of [withdrawnToken, expiredToken, usedToken, inactiveToken, "an unknown link's secret"]) {
        expect((await view(token)).kind).toBe("unavailable");
        const res = await accept(token, { password: "a long enough password 1" }, token === inactiveToken ? liveCsrf : undefined);
        await expectUnavailable(res.clone());
        bodies.push((await res.text()).replace(/[0-9a-f-]{36}/g, ""));
      }
      expect(new Set(bodies.map((b) => b.replace(/Request id[^<]*/i, ""))).size).toBe(1);
      expect(await userOf("expired@example.test")).toBeUndefined();
      expect(await userOf("inactive@example.test")).toBeUndefined();
    } finally {
      h.clock.advance(-INVITATION_TTL_MS);
      await h.service.db.update(organizations).set({ active: true }).where(eq(organizations.id, org(GLOBEX)));
    }
  });

  it("the form needs its CSRF token and a same-origin post", async () => {
    await invite(INITECH, "csrf@example.test");
    const token = await tokenMailedTo("csrf@example.test");
    expect((await accept(token, { password: "a long enough password 1" }, "forged")).status).toBe(403);
    const crossSite = await call(h, `/t/${ws}/invitation/accept`, { form: { token, csrf: ((await view(token)) as { csrf: string }).csrf, password: "a long enough password 1" }, headers: { origin: "https://evil.example" } });
    expect(crossSite.status).toBe(403);
    expect(await userOf("csrf@example.test")).toBeUndefined();
  });
});

describe("an organization's administrator", () => {
  it("invites, lists and withdraws for their own organization only; a plain member cannot", async () => {
    const ada = await userOf(ADA.email); // an administrator of Initech (accepted above), a plain member of Globex
    const bob = await userOf(BOB.email); // a plain member of Initech
    const asAda: InvitationActor = { kind: "organization_administrator", userId: ada.id };
    const asBob: InvitationActor = { kind: "organization_administrator", userId: bob.id };
    expect(await isOrganizationAdministrator(h.service.db, ws, org(INITECH), ada.id)).toBe(true);
    expect(await isOrganizationAdministrator(h.service.db, ws, org(GLOBEX), ada.id)).toBe(false);

    const sent = await invite(INITECH, "by-ada@example.test", { actor: asAda });
    expect((await invitationRow(sent.invitationId)).invitedByKind).toBe("organization_administrator");
    const listed = await h.service.db.transaction((tx) => listPendingInvitations(h.service, tx, { workspaceId: ws, organizationId: org(INITECH), actor: asAda }));
    expect(listed.find((i) => i.id === sent.invitationId)).toMatchObject({ email: "by-ada@example.test", invitedBy: ADA.email });
    // An operator's invitation names no operator to the organization's administrators.
    expect(listed.filter((i) => i.invitedByKind === "operator").every((i) => i.invitedBy === null)).toBe(true);
    await h.service.db.transaction((tx) => withdrawInvitation(h.service, tx, { workspaceId: ws, organizationId: org(INITECH), invitationId: sent.invitationId, actor: asAda }));
    expect((await invitationRow(sent.invitationId)).state).toBe("withdrawn");

    const refused = { formError: "Only an administrator of this organization can manage its invitations" };
    await expect(invite(GLOBEX, "not-ada@example.test", { actor: asAda })).rejects.toMatchObject(refused);
    await expect(h.service.db.transaction((tx) => listPendingInvitations(h.service, tx, { workspaceId: ws, organizationId: org(GLOBEX), actor: asAda }))).rejects.toMatchObject(refused);
    await expect(invite(INITECH, "by-bob@example.test", { actor: asBob })).rejects.toMatchObject(refused);
    const pending = await invite(INITECH, "kept@example.test");
    await expect(h.service.db.transaction((tx) => withdrawInvitation(h.service, tx, { workspaceId: ws, organizationId: org(INITECH), invitationId: pending.invitationId, actor: asBob }))).rejects.toMatchObject(refused);
    expect((await invitationRow(pending.invitationId)).state).toBe("pending");

    // No longer an administrator, or a disabled account: no authority.
    await setOrganizationAdministrator(h.service.db, { workspaceId: ws, organizationId: org(INITECH), userId: ada.id, administrator: false });
    await expect(invite(INITECH, "later@example.test", { actor: asAda })).rejects.toMatchObject(refused);
    await setOrganizationAdministrator(h.service.db, { workspaceId: ws, organizationId: org(INITECH), userId: ada.id, administrator: true });
    await h.service.db.update(users).set({ status: "disabled" }).where(eq(users.id, ada.id));
    try {
      expect(await isOrganizationAdministrator(h.service.db, ws, org(INITECH), ada.id)).toBe(false);
    } finally {
      await h.service.db.update(users).set({ status: "active" }).where(eq(users.id, ada.id));
    }
  });
});

describe("audit events and retention", () => {
  it("records each invitation's sending, withdrawal and acceptance", async () => {
    const sent = await invite(INITECH, "audited@example.test", { administrator: true });
    expect((await events("organization.invitation_sent")).find((e) => (e.data as { invitation_id?: string }).invitation_id === sent.invitationId)).toMatchObject({
      actor: OPERATOR.userId,
      subject: "audited@example.test",
      data: { organization_id: org(INITECH), by: "operator", administrator: true, replaced: false },
    });
    await h.service.db.transaction((tx) => withdrawInvitation(h.service, tx, { workspaceId: ws, organizationId: org(INITECH), invitationId: sent.invitationId, actor: OPERATOR }));
    expect((await events("organization.invitation_withdrawn")).find((e) => (e.data as { invitation_id?: string }).invitation_id === sent.invitationId)).toMatchObject({ subject: "audited@example.test", actor: OPERATOR.userId });
  });

  it("purges invitations 30 days after they ended (accepted, withdrawn or expired), and keeps pending ones", async () => {
    const pending = await invite(INITECH, "pending-kept@example.test");
    const rows = await h.service.db.select({ id: organizationInvitations.id, state: organizationInvitations.state }).from(organizationInvitations).where(eq(organizationInvitations.workspaceId, ws));
    const ended = rows.filter((r) => r.state !== "pending").map((r) => r.id);
    expect(ended.length).toBeGreaterThan(0);
    h.clock.advance(29 * DAY);
    try {
      await purgeRetained(h.service, { workspaceId: ws, names: ["organization_invitations"] });
      expect(await h.service.db.select().from(organizationInvitations).where(inArray(organizationInvitations.id, ended))).toHaveLength(ended.length);
      h.clock.advance(2 * DAY + 7 * DAY);
      await purgeRetained(h.service, { workspaceId: ws, names: ["organization_invitations"] });
      expect(await h.service.db.select().from(organizationInvitations).where(inArray(organizationInvitations.id, ended))).toHaveLength(0);
      // Pending past its expiry counts as ended too: gone after the same grace.
      expect(await invitationRow(pending.invitationId)).toBeUndefined();
    } finally {
      h.clock.advance(-38 * DAY);
    }
  });
});

describe("limits", () => {
  it("sends at most 50 invitations per organization an hour", async () => {
    const lh = await createHarness({ mail: OUTBOX });
    const lws = uniqueWorkspaceId("orginvl");
    const doc = authzWorkspace(lws);
    await seed(lh, doc);
    const [acme] = await lh.service.db.select().from(organizations).where(and(eq(organizations.workspaceId, lws), eq(organizations.slug, ACME)));
    const send = async (i: number, organizationId = acme.id) => {
      const allowance = await allowInvitationSend(lh.service, { workspaceId: lws, organizationId, actor: OPERATOR });
      return lh.service.db.transaction((tx) => inviteToOrganization(lh.service, tx, { workspaceId: lws, organizationId, actor: OPERATOR, email: `bulk${i}@example.test`, roleIds: [], administrator: false }, allowance));
    };
    for (let i = 0; i < 50; i++) await send(i);
    await expect(send(50)).rejects.toMatchObject({ formError: expect.stringContaining("Too many invitations") });
    // Another organization counts on its own.
    const [globex] = await lh.service.db.select().from(organizations).where(and(eq(organizations.workspaceId, lws), eq(organizations.slug, GLOBEX)));
    await send(51, globex.id);
    lh.clock.advance(61 * 60_000);
    await send(52);
  });

  it("limits the acceptance page's posts per client address", async () => {
    const lh = await createHarness({ mail: OUTBOX, rateLimits: { requestsPerMinute: 100_000, failuresPer5Minutes: 3 } });
    const lws = uniqueWorkspaceId("orginva");
    await seed(lh, authzWorkspace(lws));
    const post = () => call(lh, `/t/${lws}/invitation/accept`, { form: { token: "unknown", csrf: "x" }, headers: { origin: PUBLIC_URL } });
    for (let i = 0; i < 3; i++) expect((await post()).status).toBe(404);
    const limited = await post();
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBeTruthy();
  });
});

describe.runIf(Boolean(inject("databaseUrl")))("parallel accepts of one link (PostgreSQL)", () => {
  it("exactly one makes the account and the membership", async () => {
    await invite(INITECH, "racer@example.test", { roles: await roleIdsOf(h, ws, ["reader"]) });
    const token = await tokenMailedTo("racer@example.test");
    const v = (await view(token)) as { csrf: string };
    const results = await Promise.all(
      Array.from({ length: 8 }, () => call(h, `/t/${ws}/invitation/accept`, { form: { token, csrf: v.csrf, password: "racer's long password" }, headers: { origin: PUBLIC_URL } })),
    );
    // One accepted; the others refused alike, or (the password hashing queue per address is full) sent back to try again.
    const locations = results.map((r) => (r.status === 303 ? r.headers.get("location")! : String(r.status)));
    expect(locations.filter((l) => l.includes("done="))).toHaveLength(1);
    expect(locations.filter((l) => !l.includes("done=")).every((l) => l === "404" || l.includes("error=busy"))).toBe(true);
    expect(locations.filter((l) => l === "404").length).toBeGreaterThan(0);
    const accounts = await h.service.db.select().from(users).where(and(eq(users.workspaceId, ws), eq(users.emailNormalized, "racer@example.test")));
    expect(accounts).toHaveLength(1);
    const memberships = await h.service.db.select().from(organizationMembers).where(and(eq(organizationMembers.workspaceId, ws), eq(organizationMembers.userId, accounts[0].id)));
    expect(memberships).toHaveLength(1);
    expect(await h.service.db.select().from(userRoles).where(and(eq(userRoles.workspaceId, ws), eq(userRoles.userId, accounts[0].id)))).toHaveLength(1);
  });
});
