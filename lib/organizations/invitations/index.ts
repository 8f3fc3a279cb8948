/**
 * Organization invitations, every surface of them (`ORGANIZATION_INVITATIONS_FEATURE`): an
 * operator or an administrator of the organization invites an address with roles; the link, mailed
 * to that address only, proves the mailbox and is used once on the hosted acceptance page.
 *
 * - ./invitations.ts: who may manage an organization's invitations (`isOrganizationAdministrator`,
 *   the actor), inviting, sending again, withdrawing, listing; making a member an administrator.
 * - ./acceptance.ts: the hosted page's view and its one form post (accepting).
 * - ./console.ts: the console's operations; ./routes.ts: the route of the table (lean).
 * - ./limits.ts: the lifetime and the declared limits; ./messages.ts: the email and the page's words.
 * - the table: db/schema/organization-invitations.ts; the administrator flag: `organization_members.administrator`.
 */
import { organizationInvitations } from "../../../db/schema";
import { defineFeature } from "../../surfaces/feature";
import { defineRetention, ENDED_RETENTION_MS } from "../../surfaces/retention";
import { inviteOrganizationMember, resendOrganizationInvitation, setOrganizationMemberAdministrator, withdrawOrganizationInvitation } from "./console";
import { INVITATIONS_SENT } from "./limits";
import { ORGANIZATION_INVITATIONS_ROUTES } from "./routes";

export { allowInvitationSend, isOrganizationAdministrator, inviteToOrganization, resendInvitation, withdrawInvitation, listPendingInvitations, organizationAdministrators, setOrganizationAdministrator } from "./invitations";
export type { InvitationActor, InviteInput, PendingInvitation, SendAllowance, Sent } from "./invitations";
export { INVITATION_TTL_MS } from "./limits";

/**
 * An invitation accepted, withdrawn or past its expiry is kept ENDED_RETENTION_MS more (support
 * questions about a recent one), then purged; the audit log keeps the record.
 */
export const ORGANIZATION_INVITATIONS = defineRetention({
  name: "organization_invitations",
  table: organizationInvitations,
  key: organizationInvitations.id,
  expiresAt: [organizationInvitations.acceptedAt, organizationInvitations.withdrawnAt, organizationInvitations.expiresAt],
  grace: ENDED_RETENTION_MS,
  workspaceId: organizationInvitations.workspaceId,
});

export const ORGANIZATION_INVITATIONS_FEATURE = defineFeature({
  name: "organization-invitations",
  operations: { inviteOrganizationMember, resendOrganizationInvitation, withdrawOrganizationInvitation, setOrganizationMemberAdministrator },
  retention: [ORGANIZATION_INVITATIONS],
  routes: ORGANIZATION_INVITATIONS_ROUTES,
  guessingLimits: [INVITATIONS_SENT],
});
