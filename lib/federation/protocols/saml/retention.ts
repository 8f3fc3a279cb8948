/**
 * The replay store's retention (run by the one purger, lib/features/purge.ts): an accepted
 * assertion's ID is kept until the assertion's own expiry (after which the ACS refuses it by time
 * anyway), then the grace of every expired sign-in row.
 */
import { samlAssertionReplays } from "../../../../db/schema";
import { defineRetention, PURGE_GRACE_MS } from "../../../surfaces/retention";

export const samlAssertionRetention = defineRetention({
  name: "saml_assertion_replays",
  table: samlAssertionReplays,
  key: samlAssertionReplays.assertionId,
  expiresAt: samlAssertionReplays.expiresAt,
  grace: PURGE_GRACE_MS,
  workspaceId: samlAssertionReplays.workspaceId,
});
