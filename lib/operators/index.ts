/**
 * Operators: the people who run the console. Their accounts (users of the system workspace,
 * `accounts.ts`), their memberships and roles in workspaces (`memberships.ts`, installation
 * operators: `installation.ts`), how they join one (`invitations.ts`) and the command line's
 * `operator grant` (`grant.ts`). The console's session, sign-in and authority stay in lib/console,
 * which runs these operations.
 */
import { operatorInvitations } from "../../db/schema";
import { defineFeature } from "../surfaces/feature";
import { defineRetention, ENDED_RETENTION_MS } from "../surfaces/retention";
import { inviteOperator, revokeInvitation } from "./invitations";
import { changeOperatorRole, removeOperator, setOperatorStatus } from "./memberships";

/**
 * Operator invitations' retention (run by the one purger, lib/features/purge.ts): an invitation
 * accepted, revoked or past its expiry is kept ENDED_RETENTION_MS more. Until then the console lists
 * it with its outcome; the audit log keeps the record.
 */
export const OPERATOR_INVITATIONS = defineRetention({
  name: "operator_invitations",
  table: operatorInvitations,
  key: operatorInvitations.id,
  expiresAt: [operatorInvitations.acceptedAt, operatorInvitations.revokedAt, operatorInvitations.expiresAt],
  grace: ENDED_RETENTION_MS,
  workspaceId: operatorInvitations.workspaceId,
});

export const OPERATORS_FEATURE = defineFeature({
  name: "operators",
  operations: { inviteOperator, revokeInvitation, changeOperatorRole, removeOperator, setOperatorStatus },
  retention: [OPERATOR_INVITATIONS],
});
