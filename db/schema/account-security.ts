import { index, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { clients } from "./applications";
import { grants } from "./authorization";
import { hostedSessions, type StoredEvidence } from "./sessions";
import { users } from "./users";
import { workspaces } from "./workspaces";

/** A backend handoff into the account-security portal: launch (120 s), approve, completion (30 s). */
export const accountSecurityLaunches = pgTable(
  "account_security_launches",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    clientPk: text("client_pk").notNull().references(() => clients.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    sessionId: text("session_id").notNull().references(() => hostedSessions.id, { onDelete: "cascade" }),
    grantId: text("grant_id").notNull().references(() => grants.id, { onDelete: "cascade" }),
    stateHash: text("state_hash").notNull(),
    intent: text("intent").notNull(),
    challengeHash: text("challenge_hash"),
    state: text("state", { enum: ["issued", "approved", "redeemed", "expired"] }).notNull().default("issued"),
    createdAt: ts("created_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    completionHash: text("completion_hash"),
    completionExpiresAt: ts("completion_expires_at"),
    /** The customer's `state`, sent back on the callback (its hash above finds the launch and keeps it one per launch). */
    callbackState: text("callback_state").notNull(),
    /**
     * The hosted session of the browser that authenticated at the launch URL (the source session
     * itself when the browser held it): the completion handle is redeemed only beside its cookie.
     */
    browserSessionId: text("browser_session_id").references(() => hostedSessions.id, { onDelete: "cascade" }),
    approvedAt: ts("approved_at"),
    redeemedAt: ts("redeemed_at"),
  },
  (t) => [
    index("account_security_launches_user_idx").on(t.workspaceId, t.userId),
    index("account_security_launches_expiry_idx").on(t.expiresAt),
    uniqueIndex("account_security_launches_state_uq").on(t.workspaceId, t.clientPk, t.stateHash),
    uniqueIndex("account_security_launches_completion_uq").on(t.workspaceId, t.completionHash),
  ],
);

/**
 * A portal session (lib/account-security/portal-session.ts): 30 minutes at most, bound to the
 * hosted session it came from (and the application's grant, when a handoff opened it), its cookie
 * `<id>.<secret>` stored as the secret's hash. `evidence`: what the user re-verified in the portal
 * (step-up), reused for ten minutes by portal sessions of the same user, hosted session and grant.
 */
export const accountSecurityPortalSessions = pgTable(
  "account_security_portal_sessions",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    sessionId: text("session_id").notNull().references(() => hostedSessions.id, { onDelete: "cascade" }),
    clientPk: text("client_pk").notNull().references(() => clients.id, { onDelete: "cascade" }),
    grantId: text("grant_id").references(() => grants.id, { onDelete: "cascade" }),
    returnUri: text("return_uri").notNull(),
    secretHash: text("secret_hash").notNull(),
    evidence: jsonb("evidence").$type<StoredEvidence[]>().notNull().default([]),
    createdAt: ts("created_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    verifiedAt: ts("verified_at"),
    endedAt: ts("ended_at"),
  },
  (t) => [
    index("account_security_portal_sessions_user_idx").on(t.workspaceId, t.userId),
    index("account_security_portal_sessions_source_idx").on(t.sessionId),
  ],
);
