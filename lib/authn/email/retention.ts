/**
 * The development outbox's retention (run by the one purger, lib/features/purge.ts): a message is
 * kept a week, long enough to look up a test message, short enough not to pile up codes.
 */
import { mailOutbox } from "../../../db/schema";
import { DAY } from "../../clock";
import { defineFeature } from "../../surfaces/feature";
import { defineRetention } from "../../surfaces/retention";

export const OUTBOX_RETENTION_MS = 7 * DAY;

export const MAIL_OUTBOX = defineRetention({
  name: "mail_outbox",
  table: mailOutbox,
  key: mailOutbox.id,
  expiresAt: mailOutbox.createdAt,
  lifetime: OUTBOX_RETENTION_MS,
  grace: 0,
  workspaceId: mailOutbox.workspaceId,
});

export const EMAIL_FEATURE = defineFeature({ name: "email", retention: [MAIL_OUTBOX] });
