/**
 * Operator invitations' retention (run by the one purger, ./purge.ts): an invitation accepted,
 * revoked or past its expiry is kept ENDED_RETENTION_MS more. Until then the console lists it with
 * its outcome; the audit log keeps the record. Declared here until the operators and their
 * invitations have a folder of their own below the registry, which will declare it beside them.
 */
import { operatorInvitations } from "../../db/schema";
import { defineFeature } from "../surfaces/feature";
import { defineRetention, ENDED_RETENTION_MS } from "../surfaces/retention";

export const OPERATOR_INVITATIONS = defineRetention({
  name: "operator_invitations",
  table: operatorInvitations,
  key: operatorInvitations.id,
  expiresAt: [operatorInvitations.acceptedAt, operatorInvitations.revokedAt, operatorInvitations.expiresAt],
  grace: ENDED_RETENTION_MS,
  workspaceId: operatorInvitations.workspaceId,
});

export const OPERATORS_FEATURE = defineFeature({ name: "operators", retention: [OPERATOR_INVITATIONS] });
