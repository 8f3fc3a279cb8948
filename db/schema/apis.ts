import { boolean, index, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { clients } from "./applications";
import { workspaces } from "./workspaces";

export const apis = pgTable(
  "apis",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    /** The `resource` value clients request and the access token's audience. */
    audience: text("audience").notNull(),
    name: text("name").notNull(),
    active: boolean("active").notNull().default(true),
    permissions: jsonb("permissions").$type<string[]>().notNull().default([]),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [uniqueIndex("apis_workspace_audience_uq").on(t.workspaceId, t.audience)],
);

/**
 * An explicit grant of an API to a client. For interactive clients `permissions` lists what the
 * client may request on behalf of users; for M2M clients, what it is permitted to obtain.
 */
export const apiGrants = pgTable(
  "api_grants",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    clientPk: text("client_pk").notNull().references(() => clients.id, { onDelete: "cascade" }),
    apiId: text("api_id").notNull().references(() => apis.id, { onDelete: "cascade" }),
    permissions: jsonb("permissions").$type<string[]>().notNull().default([]),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("api_grants_client_api_uq").on(t.workspaceId, t.clientPk, t.apiId),
    index("api_grants_api_idx").on(t.workspaceId, t.apiId),
  ],
);
