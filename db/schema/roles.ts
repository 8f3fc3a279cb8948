import { index, jsonb, pgTable, text, unique, uniqueIndex } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { apis } from "./apis";
import { organizations } from "./organizations";
import { users } from "./users";
import { workspaces } from "./workspaces";

export const roles = pgTable(
  "roles",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [uniqueIndex("roles_workspace_name_uq").on(t.workspaceId, t.name)],
);

export const rolePermissions = pgTable(
  "role_permissions",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    roleId: text("role_id").notNull().references(() => roles.id, { onDelete: "cascade" }),
    apiId: text("api_id").notNull().references(() => apis.id, { onDelete: "cascade" }),
    permissions: jsonb("permissions").$type<string[]>().notNull().default([]),
  },
  (t) => [uniqueIndex("role_permissions_role_api_uq").on(t.workspaceId, t.roleId, t.apiId)],
);

/** A role held by a user at workspace level (organization null) or within one organization. */
export const userRoles = pgTable(
  "user_roles",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    roleId: text("role_id").notNull().references(() => roles.id, { onDelete: "cascade" }),
    organizationId: text("organization_id").references(() => organizations.id, { onDelete: "cascade" }),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [
    unique("user_roles_uq").on(t.workspaceId, t.userId, t.roleId, t.organizationId).nullsNotDistinct(),
    index("user_roles_role_idx").on(t.workspaceId, t.roleId),
  ],
);
