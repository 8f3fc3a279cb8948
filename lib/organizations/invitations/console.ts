/**
 * The console's operations on an organization's invitations and administrators (workspace
 * administrators; run by lib/console's runOperation: the operator's role, the input, the change and
 * its audit event in one transaction). Each calls the same rule an organization's administrator's
 * page would (./invitations.ts), with the operator as the actor.
 */
import { z } from "zod";
import { organizations } from "../../../db/schema";
import { and, eq } from "drizzle-orm";
import { checkbox, checked, email, id, optionalText } from "../../forms/fields";
import { currentLocale } from "../../i18n/request-locale";
import { defineOperation, formError } from "../../surfaces/operation";
import { allowInvitationSend, inviteToOrganization, resendInvitation, setOrganizationAdministrator, withdrawInvitation, type InvitationActor } from "./invitations";
import type { WorkspaceAccess } from "../../surfaces/operation";

/** Who invites: the operator, or (through the organization's admin portal) an administrator of the organization, whose authority the rules check again. */
const actorOf = (access: WorkspaceAccess): InvitationActor => ({ kind: access.portal?.administrator ? "organization_administrator" : "operator", userId: access.operator.userId });

/** Invites an address to the organization with roles (and as an administrator): the link is mailed to the address only. */
export const inviteOrganizationMember = defineOperation({
  name: "organization.member_invited",
  role: "admin",
  input: z.object({ organization_id: id("organization"), email: email(), role_ids: checked(), administrator: checkbox(), client_id: optionalText(200) }),
  prepare: (input, { service, access }) => allowInvitationSend(service, { workspaceId: access.workspace.id, organizationId: input.organization_id, actor: actorOf(access) }),
  async run(ctx, input, allowance) {
    const sent = await inviteToOrganization(ctx.service, ctx.db, {
      workspaceId: ctx.access.workspace.id,
      organizationId: input.organization_id,
      actor: actorOf(ctx.access),
      email: input.email,
      roleIds: input.role_ids,
      administrator: input.administrator,
      clientId: input.client_id || null,
      locale: currentLocale(),
    }, allowance);
    return {
      result: { email: sent.email, expiresAt: sent.expiresAt, emailed: sent.emailed },
      audit: {
        target: sent.organizationSlug,
        data: { invitation_id: sent.invitationId, email: sent.email, roles: sent.roleIds, administrator: sent.administrator, expires_at: sent.expiresAt.toISOString(), replaced: sent.replaced },
      },
    };
  },
});

/** Sends a pending invitation again: a new link, the old one dead. */
export const resendOrganizationInvitation = defineOperation({
  name: "organization.invitation_resent",
  role: "admin",
  input: z.object({ organization_id: id("organization"), invitation_id: id("invitation") }),
  prepare: (input, { service, access }) => allowInvitationSend(service, { workspaceId: access.workspace.id, organizationId: input.organization_id, actor: actorOf(access) }),
  async run(ctx, input, allowance) {
    const sent = await resendInvitation(ctx.service, ctx.db, {
      workspaceId: ctx.access.workspace.id,
      organizationId: input.organization_id,
      invitationId: input.invitation_id,
      actor: actorOf(ctx.access),
      locale: currentLocale(),
    }, allowance);
    return {
      result: { email: sent.email, expiresAt: sent.expiresAt, emailed: sent.emailed },
      audit: { target: sent.organizationSlug, data: { invitation_id: sent.invitationId, email: sent.email, expires_at: sent.expiresAt.toISOString() } },
    };
  },
});

/** Withdraws a pending invitation: its link stops working at once. */
export const withdrawOrganizationInvitation = defineOperation({
  name: "organization.invitation_withdrawn",
  role: "admin",
  input: z.object({ organization_id: id("organization"), invitation_id: id("invitation") }),
  async run(ctx, input) {
    const withdrawn = await withdrawInvitation(ctx.service, ctx.db, {
      workspaceId: ctx.access.workspace.id,
      organizationId: input.organization_id,
      invitationId: input.invitation_id,
      actor: actorOf(ctx.access),
    });
    return { result: null, audit: { target: withdrawn.organizationSlug, data: { invitation_id: input.invitation_id, email: withdrawn.email } } };
  },
});

/** Makes a member an administrator of the organization (they may invite people to it), or no longer one. */
export const setOrganizationMemberAdministrator = defineOperation({
  name: "organization.member_administrator_set",
  role: "admin",
  input: z.object({ organization_id: id("organization"), user_id: id("user"), administrator: checkbox() }),
  async run(ctx, input) {
    const wid = ctx.access.workspace.id;
    const [org] = await ctx.db.select({ slug: organizations.slug }).from(organizations).where(and(eq(organizations.workspaceId, wid), eq(organizations.id, input.organization_id))).limit(1);
    if (!org) throw formError("This organization no longer exists");
    const changed = await setOrganizationAdministrator(ctx.db, { workspaceId: wid, organizationId: input.organization_id, userId: input.user_id, administrator: input.administrator });
    if (!changed) throw formError("This user is not a member");
    return { result: null, audit: { target: org.slug, data: { user_id: input.user_id, administrator: input.administrator } } };
  },
});
