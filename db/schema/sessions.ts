import { index, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { organizations, enterpriseConnections } from "./organizations";
import { users } from "./users";
import { workspaces } from "./workspaces";

/**
 * One authentication event of a hosted session, as stored. What the fields mean, the allowed
 * values and every value derived from them (`auth_time`, `amr`, `acr`) belong to
 * lib/authn/evidence.ts, which reads this shape back through its own check.
 */
export interface StoredEvidence {
  method: string;
  amr: string[];
  strength: string;
  factorId: string | null;
  /** ISO 8601, UTC. */
  at: string;
}

/** A hosted browser session on the authentication host (id + secret; only the hash is kept). */
export const hostedSessions = pgTable(
  "hosted_sessions",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    secretHash: text("secret_hash").notNull(),
    /** What the user proved in this session; authTime, amr and acr are derived from it when it is written. */
    evidence: jsonb("evidence").$type<StoredEvidence[]>().notNull().default([]),
    authTime: ts("auth_time").notNull(),
    amr: jsonb("amr").$type<string[]>().notNull().default([]),
    acr: text("acr").notNull(),
    organizationId: text("organization_id").references(() => organizations.id, { onDelete: "cascade" }),
    connectionId: text("connection_id").references(() => enterpriseConnections.id, { onDelete: "cascade" }),
    createdAt: ts("created_at").notNull(),
    lastSeenAt: ts("last_seen_at").notNull(),
    idleExpiresAt: ts("idle_expires_at").notNull(),
    absoluteExpiresAt: ts("absolute_expires_at").notNull(),
    endedAt: ts("ended_at"),
    endReason: text("end_reason"),
    userAgent: text("user_agent"),
    ip: text("ip"),
    /** The workspace hostname whose cookie carries the session (lib/hostnames); null: the default host. */
    hostname: text("hostname"),
  },
  (t) => [index("hosted_sessions_user_idx").on(t.workspaceId, t.userId), index("hosted_sessions_workspace_created_idx").on(t.workspaceId, t.createdAt)],
);
