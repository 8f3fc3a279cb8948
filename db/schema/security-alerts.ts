import { boolean, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { users } from "./users";
import { workspaces } from "./workspaces";

/**
 * A workspace's security alerts by email (lib/security-alerts): which ones its users get. A
 * workspace without a row sends none, as SPEC.md describes. `updated_at` is also where the alerts
 * start: an event older than the policy's last change never alerts, so turning an alert on does
 * not mail about the day before.
 */
export const securityAlertPolicies = pgTable("security_alert_policies", {
  workspaceId: text("workspace_id")
    .primaryKey()
    .references(() => workspaces.id, { onDelete: "cascade" }),
  newPassword: boolean("new_password").notNull().default(false),
  factorChanged: boolean("factor_changed").notNull().default(false),
  newRecoveryCodes: boolean("new_recovery_codes").notNull().default(false),
  newBrowser: boolean("new_browser").notNull().default(false),
  tokenReuse: boolean("token_reuse").notNull().default(false),
  updatedAt: ts("updated_at").notNull(),
});

/**
 * One row per audit event an alert was (or is being) sent for: the claim that makes one server
 * process, of several, the sender (INSERT … ON CONFLICT). A claim not marked sent within its lease
 * is taken again, a few times at most. Kept past the dispatcher's look-back window, then purged.
 */
export const securityAlerts = pgTable("security_alerts", {
  eventId: text("event_id").primaryKey(),
  workspaceId: text("workspace_id")
    .notNull()
    .references(() => workspaces.id, { onDelete: "cascade" }),
  /** The alert (`new_password`, `factor_changed`, …). */
  kind: text("kind").notNull(),
  claimedAt: ts("claimed_at").notNull(),
  attempts: integer("attempts").notNull().default(1),
  /** `sent`, or why none was (`no_account`); null while the claim is pending. */
  outcome: text("outcome"),
  doneAt: ts("done_at"),
});

/**
 * The browsers each account completed a sign-in from: a browser is known by its long-lived
 * `lk_browser` cookie, of which only the SHA-256 is kept. A sign-in from a browser the account has
 * not used before is a "new browser" alert.
 */
export const knownBrowsers = pgTable(
  "known_browsers",
  {
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    browserHash: text("browser_hash").notNull(),
    firstSeenAt: ts("first_seen_at").notNull(),
    lastSeenAt: ts("last_seen_at").notNull(),
  },
  (t) => [primaryKey({ name: "known_browsers_pk", columns: [t.workspaceId, t.userId, t.browserHash] })],
);
