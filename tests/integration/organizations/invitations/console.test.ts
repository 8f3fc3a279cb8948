/**
 * The console's side of organization invitations (run as the server actions run them,
 * runOperation): a workspace administrator invites, sends again, withdraws and makes members
 * administrators, each one audited event; a viewer cannot. The administrator flag is part of the
 * workspace file (export, import); invitations are not.
 */
import { and, desc, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { auditEvents, organizationInvitations, organizationMembers, organizations, roles, users } from "../../../../db/schema";
import { ensureSystemWorkspace } from "../../../../lib/console/system";
import { listPendingInvitations } from "../../../../lib/organizations/invitations";
import { exportWorkspace } from "../../../../lib/workspaces/file";
import { seed, uniqueWorkspaceId, type Harness } from "../../../helpers/harness";
import { adminAndViewer, createConsoleHarness, runRegistered } from "../../console-helpers";

let h: Harness;
const W = uniqueWorkspaceId("cinv");
let admin: string;
let viewer: string;
let acme: string;

const DOC = {
  id: W,
  name: "Invitations console",
  roles: [{ name: "reader" }],
  users: [
    { email: "ann@acme.example", email_verified: true },
    { email: "ben@acme.example", email_verified: true },
  ],
  organizations: [{ slug: "acme", name: "Acme", members: ["ann@acme.example", "ben@acme.example"], administrators: ["ann@acme.example"] }],
};

beforeAll(async () => {
  h = await createConsoleHarness();
  await seed(h, DOC);
  await ensureSystemWorkspace(h.service);
  ({ admin, viewer } = await adminAndViewer(h, W, "cinv.operators.test"));
  acme = (await h.service.db.select().from(organizations).where(and(eq(organizations.workspaceId, W), eq(organizations.slug, "acme"))))[0].id;
});

const latest = async (type: string) => (await h.service.db.select().from(auditEvents).where(and(eq(auditEvents.workspaceId, W), eq(auditEvents.type, type))).orderBy(desc(auditEvents.createdAt)).limit(1))[0];
const userId = async (email: string) => (await h.service.db.select().from(users).where(and(eq(users.workspaceId, W), eq(users.emailNormalized, email))))[0].id;
const adminFlag = async (email: string) =>
  (await h.service.db.select().from(organizationMembers).where(and(eq(organizationMembers.organizationId, acme), eq(organizationMembers.userId, await userId(email)))))[0].administrator;

describe("the console's invitations", () => {
  it("invites with roles, lists, sends again and withdraws, each one audited event; a viewer cannot", async () => {
    const [reader] = await h.service.db.select().from(roles).where(eq(roles.workspaceId, W));
    const invited = await runRegistered(h, admin, W, "inviteOrganizationMember", { organization_id: acme, email: "Cleo@Acme.example", role_ids: [reader.id], administrator: "on" });
    expect(invited).toMatchObject({ ok: true });
    const event = await latest("console.organization.member_invited");
    expect(event).toMatchObject({ subject: "acme", data: { email: "Cleo@Acme.example", roles: [reader.id], administrator: true, replaced: false } });
    // The invitation's own event is folded into the operation's one event.
    expect((event.data as { effects?: { type: string }[] }).effects?.map((e) => e.type)).toEqual(["organization.invitation_sent"]);

    const operator = { kind: "operator" as const, userId: event.actor! };
    const [pending] = await listPendingInvitations(h.service, h.service.db, { workspaceId: W, organizationId: acme, actor: operator });
    expect(pending).toMatchObject({ email: "Cleo@Acme.example", administrator: true, roles: [{ id: reader.id, name: "reader" }], invitedBy: "admin@cinv.operators.test", expired: false });

    const before = (await h.service.db.select().from(organizationInvitations).where(eq(organizationInvitations.id, pending.id)))[0].tokenHash;
    expect(await runRegistered(h, admin, W, "resendOrganizationInvitation", { organization_id: acme, invitation_id: pending.id })).toMatchObject({ ok: true });
    expect((await h.service.db.select().from(organizationInvitations).where(eq(organizationInvitations.id, pending.id)))[0].tokenHash).not.toBe(before);
    expect(await latest("console.organization.invitation_resent")).toMatchObject({ subject: "acme", data: { invitation_id: pending.id } });

    await expect(runRegistered(h, viewer, W, "withdrawOrganizationInvitation", { organization_id: acme, invitation_id: pending.id })).rejects.toThrow();
    expect(await runRegistered(h, admin, W, "withdrawOrganizationInvitation", { organization_id: acme, invitation_id: pending.id })).toMatchObject({ ok: true });
    expect(await latest("console.organization.invitation_withdrawn")).toMatchObject({ subject: "acme", data: { invitation_id: pending.id, email: "Cleo@Acme.example" } });
    expect(await runRegistered(h, admin, W, "withdrawOrganizationInvitation", { organization_id: acme, invitation_id: pending.id })).toMatchObject({ ok: false, formError: "This invitation is no longer pending" });
  });

  it("refuses an existing member beside the address field", async () => {
    expect(await runRegistered(h, admin, W, "inviteOrganizationMember", { organization_id: acme, email: "BEN@acme.example" })).toMatchObject({
      ok: false,
      fieldErrors: { email: "This address is already a member of the organization" },
    });
  });
});

describe("organization administrators", () => {
  it("are set in the console (audited) and round-trip through the workspace file; invitations are not in the file", async () => {
    expect(await adminFlag("ann@acme.example")).toBe(true);
    expect(await adminFlag("ben@acme.example")).toBe(false);
    await expect(runRegistered(h, viewer, W, "setOrganizationMemberAdministrator", { organization_id: acme, user_id: await userId("ben@acme.example"), administrator: "true" })).rejects.toThrow();
    expect(await runRegistered(h, admin, W, "setOrganizationMemberAdministrator", { organization_id: acme, user_id: await userId("ben@acme.example"), administrator: "true" })).toMatchObject({ ok: true });
    expect(await adminFlag("ben@acme.example")).toBe(true);
    expect(await latest("console.organization.member_administrator_set")).toMatchObject({ subject: "acme", data: { administrator: true } });

    const exported = (await exportWorkspace(h.service.db, W))!;
    const org = exported.organizations.find((o) => o.slug === "acme")!;
    expect(org.administrators).toEqual(["ann@acme.example", "ben@acme.example"]);
    expect(JSON.stringify(exported)).not.toContain("invitation");

    // The file says who administers: Ann no longer.
    await seed(h, { ...DOC, organizations: [{ ...DOC.organizations[0], administrators: ["ben@acme.example"] }] });
    expect(await adminFlag("ann@acme.example")).toBe(false);
    expect(await adminFlag("ben@acme.example")).toBe(true);
    await seed(h, { ...DOC, organizations: [{ ...DOC.organizations[0], administrators: undefined }] });
    expect(await adminFlag("ben@acme.example")).toBe(false);
    expect((await exportWorkspace(h.service.db, W))!.organizations[0]).not.toHaveProperty("administrators");
  });

  it("the file refuses an administrator who is not a member", async () => {
    await expect(seed(h, { ...DOC, organizations: [{ ...DOC.organizations[0], administrators: ["stranger@acme.example"] }] })).rejects.toThrow(/not in this organization's members/);
  });
});
