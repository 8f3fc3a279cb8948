/**
 * Federation's short-lived rows (run by the one purger, lib/features/purge.ts): the IDs of accepted
 * SAML assertions (the replay guard, ./saml.ts) are kept until the assertion's own expiry, after
 * which it is refused by time anyway, and then an hour.
 */
import { samlAssertionReplays } from "../../db/schema";
import { defineFeature } from "../surfaces/feature";
import { defineRetention, PURGE_GRACE_MS } from "../surfaces/retention";

export const SAML_ASSERTION_REPLAYS = defineRetention({
  name: "saml_assertion_replays",
  table: samlAssertionReplays,
  key: samlAssertionReplays.assertionId,
  expiresAt: samlAssertionReplays.expiresAt,
  grace: PURGE_GRACE_MS,
  workspaceId: samlAssertionReplays.workspaceId,
});

export const FEDERATION_FEATURE = defineFeature({ name: "federation", retention: [SAML_ASSERTION_REPLAYS] });
