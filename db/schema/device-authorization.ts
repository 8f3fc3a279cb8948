import { boolean, index, integer, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { apis } from "./apis";
import { clients } from "./applications";
import { hostedSessions } from "./sessions";
import { users } from "./users";
import { workspaces } from "./workspaces";

/**
 * A device authorization (RFC 8628, lib/oauth/device-authorization): what a device asked for, its
 * device code and user code (only their hashes), the browser that entered the user code, and the
 * user's decision. `pending` until the user approves or denies; an approved one is consumed by the
 * one poll that receives the tokens (`consumed`). Lives at most 10 minutes; the purger deletes it after.
 */
export const deviceAuthorizations = pgTable(
  "device_authorizations",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    clientPk: text("client_pk")
      .notNull()
      .references(() => clients.id, { onDelete: "cascade" }),
    /** SHA-256 of the device code (256 random bits). */
    deviceCodeHash: text("device_code_hash").notNull(),
    /** Keyed hash (HMAC under the master key, with the workspace) of the normalized user code: it has only ~34 bits. */
    userCodeHash: text("user_code_hash").notNull(),
    scope: jsonb("scope").$type<string[]>().notNull(),
    apiId: text("api_id").references(() => apis.id, { onDelete: "cascade" }),
    status: text("status", { enum: ["pending", "approved", "denied", "consumed"] }).notNull().default("pending"),
    /** Seconds the device must wait between polls: 5, raised by 5 at each poll that came too early (RFC 8628 §3.5). */
    intervalSeconds: integer("interval_seconds").notNull().default(5),
    lastPolledAt: ts("last_polled_at"),
    /** Whether the last poll came before the interval had passed (set from the previous values by the poll's one update). */
    lastPollEarly: boolean("last_poll_early").notNull().default(false),
    /** SHA-256 of the secret in the cookie of the browser that entered the user code: only it can approve. */
    browserBindingHash: text("browser_binding_hash"),
    /** Who decided, in which hosted session (set with the decision). */
    userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
    sessionId: text("session_id").references(() => hostedSessions.id, { onDelete: "cascade" }),
    /** The grant the consuming poll created. */
    grantId: text("grant_id"),
    /** The workspace hostname the device asked at (lib/hostnames); null: the default host. */
    hostname: text("hostname"),
    createdAt: ts("created_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    decidedAt: ts("decided_at"),
    consumedAt: ts("consumed_at"),
  },
  (t) => [
    uniqueIndex("device_authorizations_device_code_idx").on(t.workspaceId, t.deviceCodeHash),
    uniqueIndex("device_authorizations_user_code_idx").on(t.workspaceId, t.userCodeHash),
    index("device_authorizations_expiry_idx").on(t.workspaceId, t.expiresAt),
  ],
);
