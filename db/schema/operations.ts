import { index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { users } from "./users";
import { workspaces } from "./workspaces";

/** Fixed-window limiter counters, in the database so they hold across instances. */
export const rateLimits = pgTable("rate_limits", {
  key: text("key").primaryKey(),
  windowStart: ts("window_start").notNull(),
  count: integer("count").notNull(),
});

/** Console operators (users of the system workspace) and their role in each workspace. */
export const operatorMemberships = pgTable(
  "operator_memberships",
  {
    id: text("id").primaryKey(),
    operatorUserId: text("operator_user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["owner", "admin", "viewer"] }).notNull(),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [uniqueIndex("operator_memberships_uq").on(t.workspaceId, t.operatorUserId)],
);

/** One-time setup tokens and other service-wide settings. */
export const serviceSettings = pgTable("service_settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
  updatedAt: ts("updated_at").notNull(),
});

/**
 * An invitation to operate a workspace: how an operator is added. Nobody chooses another
 * operator's credential; the invitee accepts by setting their own password (a new operator) or by
 * signing in as the account they already have. The link's secret is single use and expires; only
 * its SHA-256 is stored.
 */
export const operatorInvitations = pgTable(
  "operator_invitations",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    emailNormalized: text("email_normalized").notNull(),
    role: text("role", { enum: ["owner", "admin", "viewer"] }).notNull(),
    /** SHA-256 (hex) of the secret in the invitation link. */
    tokenHash: text("token_hash").notNull(),
    invitedBy: text("invited_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: ts("created_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    acceptedAt: ts("accepted_at"),
    /** The operator account (a user of the system workspace) that accepted it. */
    acceptedBy: text("accepted_by").references(() => users.id, { onDelete: "set null" }),
    revokedAt: ts("revoked_at"),
    /**
     * SHA-256 (hex) of the proof handed to the browser that entered the code sent to the invited
     * address, and when: only that browser creates the account or accepts.
     */
    proofHash: text("proof_hash"),
    provenAt: ts("proven_at"),
  },
  (t) => [uniqueIndex("operator_invitations_token_uq").on(t.tokenHash), index("operator_invitations_workspace_email_idx").on(t.workspaceId, t.emailNormalized)],
);
