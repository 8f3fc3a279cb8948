/**
 * Operators: the people who run the console. Their accounts (users of the system workspace,
 * `accounts.ts`), their memberships and roles in workspaces (`memberships.ts`, installation
 * operators: `installation.ts`), how they join one (`invitations.ts`) and the command line's
 * `operator grant` (`grant.ts`). The console's session, sign-in and authority stay in lib/console,
 * which runs these operations.
 */
import { operatorInvitations } from "../../db/schema";
import { DAY } from "../clock";
import { defineFeature } from "../surfaces/feature";
import { defineRetention } from "../surfaces/retention";
import { inviteOperator, revokeInvitation } from "./invitations";
import { changeOperatorRole, removeOperator, setOperatorStatus } from "./memberships";

/** An invitation over (accepted, revoked or expired) is kept 30 days: the console lists it with its outcome; the audit log keeps the record. */
export const ENDED_INVITATION_RETENTION_MS = 30 * DAY;

/**
 * Invitations over for ENDED_INVITATION_RETENTION_MS: accepted, revoked, or past their expiry,
 * whichever came first: one declaration per end (a row not accepted or not revoked has no such time, so that declaration never selects it).
 */
export const INVITATION_RETENTION = [
  defineRetention({
    name: "operator_invitations",
    table: operatorInvitations,
    key: operatorInvitations.id,
    expiresAt: operatorInvitations.expiresAt,
    grace: ENDED_INVITATION_RETENTION_MS,
    workspaceId: operatorInvitations.workspaceId,
  }),
  defineRetention({
    name: "operator_invitations_accepted",
    table: operatorInvitations,
    key: operatorInvitations.id,
    expiresAt: operatorInvitations.acceptedAt,
    grace: ENDED_INVITATION_RETENTION_MS,
    workspaceId: operatorInvitations.workspaceId,
  }),
  defineRetention({
    name: "operator_invitations_revoked",
    table: operatorInvitations,
    key: operatorInvitations.id,
    expiresAt: operatorInvitations.revokedAt,
    grace: ENDED_INVITATION_RETENTION_MS,
    workspaceId: operatorInvitations.workspaceId,
  }),
] as const;

export const OPERATORS_FEATURE = defineFeature({
  name: "operators",
  operations: { inviteOperator, revokeInvitation, changeOperatorRole, removeOperator, setOperatorStatus },
  retention: INVITATION_RETENTION,
});
