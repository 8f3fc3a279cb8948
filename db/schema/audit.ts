import { index, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { workspaces } from "./workspaces";

export const auditEvents = pgTable(
  "audit_events",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    /** e.g. grant.revoked, refresh.reuse_detected, session.logout, console.application.updated */
    type: text("type").notNull(),
    /** Operator user id for console changes; null for protocol events. */
    actor: text("actor"),
    clientId: text("client_id"),
    subject: text("subject"),
    reason: text("reason"),
    /** Marks a possible token theft (refresh reuse). */
    flagged: text("flagged"),
    data: jsonb("data").$type<Record<string, unknown>>().notNull().default({}),
    ip: text("ip"),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [
    index("audit_events_workspace_time_idx").on(t.workspaceId, t.createdAt),
    index("audit_events_workspace_type_idx").on(t.workspaceId, t.type, t.createdAt),
    index("audit_events_workspace_actor_idx").on(t.workspaceId, t.actor, t.createdAt),
  ],
);
