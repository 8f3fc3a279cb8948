/**
 * Authenticator-app enrolments never completed: one can be completed for ENROLMENT_TTL_MS from its
 * creation (./totp.ts), and is deleted PURGE_GRACE_MS after that by the one purger
 * (lib/features/purge.ts). A confirmed factor is the user's, kept until removed.
 */
import { isNull } from "drizzle-orm";
import { totpFactors } from "../../../../db/schema";
import { defineRetention, PURGE_GRACE_MS } from "../../../surfaces/retention";
import { ENROLMENT_TTL_MS } from "./totp";

export const TOTP_ENROLMENTS = defineRetention({
  name: "totp_enrolments",
  table: totpFactors,
  key: totpFactors.id,
  expiresAt: totpFactors.createdAt,
  lifetime: ENROLMENT_TTL_MS,
  grace: PURGE_GRACE_MS,
  workspaceId: totpFactors.workspaceId,
  where: () => isNull(totpFactors.confirmedAt),
});
