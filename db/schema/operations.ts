import { integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
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
