import { index, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { clients } from "./applications";
import { workspaces } from "./workspaces";

/**
 * A pushed authorization request (RFC 9126): the parameters an application sent on the back
 * channel, validated as the authorization endpoint validates them, waiting (at most 60 seconds)
 * for the browser to arrive with its `request_uri`, which is used once. Only the URI's hash is kept.
 */
export const pushedAuthorizationRequests = pgTable(
  "pushed_authorization_requests",
  {
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    /** SHA-256 (hex) of the whole request_uri. */
    uriHash: text("uri_hash").notNull(),
    clientPk: text("client_pk").notNull().references(() => clients.id, { onDelete: "cascade" }),
    /** The client_id it was pushed by: the browser's request must name the same. */
    clientId: text("client_id").notNull(),
    /** The pushed parameters, in order, as name and value pairs. */
    parameters: jsonb("parameters").$type<[string, string][]>().notNull(),
    createdAt: ts("created_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    usedAt: ts("used_at"),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.uriHash] }), index("pushed_authorization_requests_expiry_idx").on(t.workspaceId, t.expiresAt)],
);
