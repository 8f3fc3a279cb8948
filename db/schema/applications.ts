import { boolean, index, integer, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { workspaces } from "./workspaces";

export const clientTypes = ["PUBLIC", "WEB_CONFIDENTIAL", "M2M"] as const;
export type ClientType = (typeof clientTypes)[number];

export const clients = pgTable(
  "clients",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    /** The public OAuth client_id, unique within the workspace. */
    clientId: text("client_id").notNull(),
    name: text("name").notNull(),
    type: text("type", { enum: clientTypes }).notNull(),
    active: boolean("active").notNull().default(true),
    redirectUris: jsonb("redirect_uris").$type<string[]>().notNull().default([]),
    postLogoutRedirectUris: jsonb("post_logout_redirect_uris").$type<string[]>().notNull().default([]),
    /**
     * The application's home page, on the origin of its first redirect URI (optional): where the
     * account-security portal's "Back to …" link and "Done" go after the direct link.
     */
    homeUri: text("home_uri"),
    allowedOrigins: jsonb("allowed_origins").$type<string[]>().notNull().default([]),
    identityScopes: jsonb("identity_scopes").$type<string[]>().notNull().default(["openid"]),
    /** Whether the application offers the account-security portal. */
    accountSecurity: boolean("account_security").notNull().default(false),
    handoffCallbackUri: text("handoff_callback_uri"),
    handoffReturnUri: text("handoff_return_uri"),
    handoffVersion: integer("handoff_version").notNull().default(0),
    /** This application's overrides of the workspace's authentication policy (lib/authn/policy.ts). */
    authPolicy: jsonb("auth_policy").$type<Record<string, unknown>>().notNull().default({}),
    /** Lifetime applied to new secrets of this client, in days (1–365). */
    secretLifetimeDays: integer("secret_lifetime_days").notNull().default(90),
    /**
     * The protocol options the features declare per application (lib/surfaces/application-options.ts),
     * by key: only the ones switched on are stored. A key no feature declares means nothing.
     */
    options: jsonb("options").$type<Record<string, boolean>>().notNull().default({}),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("clients_workspace_client_id_uq").on(t.workspaceId, t.clientId),
    index("clients_workspace_updated_idx").on(t.workspaceId, t.updatedAt),
  ],
);

export const clientSecrets = pgTable(
  "client_secrets",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    clientPk: text("client_pk").notNull().references(() => clients.id, { onDelete: "cascade" }),
    /** SHA-256 of the secret (hex); the secret itself is shown once and never stored. */
    secretHash: text("secret_hash").notNull(),
    createdAt: ts("created_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    revokedAt: ts("revoked_at"),
    lastUsedAt: ts("last_used_at"),
  },
  (t) => [index("client_secrets_client_idx").on(t.workspaceId, t.clientPk)],
);
