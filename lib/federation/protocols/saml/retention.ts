/**
 * The replay store's retention: an accepted assertion's ID is kept until the assertion's own
 * expiry (after which the ACS refuses it by time anyway), then an hour more, the grace of every
 * expired sign-in row (lib/oauth/token-purge.ts PURGE_GRACE_MS).
 */
import { samlAssertionReplays } from "../../../../db/schema";
import { HOUR } from "../../../clock";
import { defineRetention } from "../../../surfaces/retention";

export const samlAssertionRetention = defineRetention({
  name: "saml_assertions",
  table: samlAssertionReplays,
  key: samlAssertionReplays.assertionId,
  expiresAt: samlAssertionReplays.expiresAt,
  grace: HOUR,
  workspaceId: samlAssertionReplays.workspaceId,
});
