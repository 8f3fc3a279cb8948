import { boolean, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { ts } from "./common";

export const workspaces = pgTable("workspaces", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  /** The reserved operator workspace of the console. */
  system: boolean("system").notNull().default(false),
  /** The workspace's authentication policy (lib/authn/policy.ts reads it back through its own check). */
  authPolicy: jsonb("auth_policy").$type<Record<string, unknown>>().notNull().default({}),
  createdAt: ts("created_at").notNull(),
  updatedAt: ts("updated_at").notNull(),
});
