/**
 * The factors' short-lived rows (run by the one purger, lib/features/purge.ts): challenges (email
 * codes, WebAuthn challenges) an hour past expiry, and each factor's own (an authenticator-app
 * enrolment never completed, ./totp/retention.ts).
 */
import { factorChallenges } from "../../../db/schema";
import { defineFeature } from "../../surfaces/feature";
import { defineRetention, PURGE_GRACE_MS } from "../../surfaces/retention";
import { TOTP_ENROLMENTS } from "./totp/retention";

export const FACTOR_CHALLENGES = defineRetention({
  name: "factor_challenges",
  table: factorChallenges,
  key: factorChallenges.id,
  expiresAt: factorChallenges.expiresAt,
  grace: PURGE_GRACE_MS,
  workspaceId: factorChallenges.workspaceId,
});

export const FACTORS_FEATURE = defineFeature({ name: "factors", retention: [FACTOR_CHALLENGES, TOTP_ENROLMENTS] });
