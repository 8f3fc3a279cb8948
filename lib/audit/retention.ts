/**
 * The audit log's retention: events older than AUDIT_RETENTION_DAYS are deleted by the one purger
 * (lib/features/purge.ts); with no retention configured (the default) every event is kept.
 *
 * lib/audit sits below lib/surfaces (which imports it), so this is a plain value of the shape of a
 * `Retention` (lib/surfaces/retention.ts), checked against that type where the registry of features
 * lists it (lib/features/registry.ts).
 */
import { auditEvents } from "../../db/schema";
import { DAY } from "../clock";
import type { Config } from "../config";

export const AUDIT_EVENTS = {
  name: "audit_events",
  table: auditEvents,
  key: auditEvents.id,
  expiresAt: auditEvents.createdAt,
  grace: (config: Config) => (config.auditRetentionDays ? config.auditRetentionDays * DAY : null),
  workspaceId: auditEvents.workspaceId,
};
