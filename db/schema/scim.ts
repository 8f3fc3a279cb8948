/**
 * SCIM 2.0 inbound provisioning (lib/organizations/scim): an organization's directory (its
 * settings), the bearer tokens its identity provider calls with, the users and groups the
 * directory provisioned, and its last requests.
 */
import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { enterpriseConnections, organizations } from "./organizations";
import { users } from "./users";
import { workspaces } from "./workspaces";

/** How a directory's groups give roles in its organization: each group (by display name) to organization-level roles (by id). */
export interface ScimGroupRoles {
  group: string;
  roleIds: string[];
}

/** An organization's directory: one per organization, created when an administrator turns provisioning on. */
export const scimDirectories = pgTable(
  "scim_directories",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    /** Off: every request is refused (401), nothing provisioned is touched. */
    enabled: boolean("enabled").notNull().default(true),
    /** The organization's connection its users sign in through: a provisioned user's identity is keyed by it. */
    connectionId: text("connection_id").references(() => enterpriseConnections.id, { onDelete: "set null" }),
    /** Which SCIM attribute is the connection's subject (OIDC `sub`, SAML NameID): `externalId` or `userName`. */
    subjectAttribute: text("subject_attribute", { enum: ["externalId", "userName"] }).notNull().default("externalId"),
    /** Whether accounts the directory created may also sign in without the connection (password, email code, passkey). */
    localSignIn: boolean("local_sign_in").notNull().default(false),
    /** Whether addresses outside the organization's verified domains may be provisioned (an explicit, audited choice). */
    anyDomain: boolean("any_domain").notNull().default(false),
    groupRoles: jsonb("group_roles").$type<ScimGroupRoles[]>().notNull().default([]),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [uniqueIndex("scim_directories_org_uq").on(t.workspaceId, t.organizationId)],
);

/**
 * A directory's bearer token: only its SHA-256 is kept. A rotation gives the previous token an
 * expiry (at most 24 hours on); a revocation ends it at once.
 */
export const scimTokens = pgTable(
  "scim_tokens",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    directoryId: text("directory_id").notNull().references(() => scimDirectories.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull(),
    createdAt: ts("created_at").notNull(),
    expiresAt: ts("expires_at"),
    revokedAt: ts("revoked_at"),
    lastUsedAt: ts("last_used_at"),
  },
  (t) => [uniqueIndex("scim_tokens_hash_uq").on(t.tokenHash), index("scim_tokens_directory_idx").on(t.workspaceId, t.directoryId)],
);

/**
 * A user the directory provisioned: the SCIM resource (its attributes as the directory sent them,
 * `attributes`; the indexed ones as columns) and the account it is (`user_id`). `managed`: the
 * directory created the account, so it also disables and deletes it.
 */
export const scimUsers = pgTable(
  "scim_users",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    directoryId: text("directory_id").notNull().references(() => scimDirectories.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    userName: text("user_name").notNull(),
    /** Lower case: userName is case-insensitive (RFC 7643 §4.1.1). */
    userNameKey: text("user_name_key").notNull(),
    externalId: text("external_id"),
    displayName: text("display_name"),
    /** The primary (or first) email, normalized: what filters on `emails.value` read first. */
    emailKey: text("email_key"),
    active: boolean("active").notNull().default(true),
    managed: boolean("managed").notNull(),
    attributes: jsonb("attributes").$type<Record<string, unknown>>().notNull(),
    version: integer("version").notNull().default(1),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("scim_users_user_name_uq").on(t.workspaceId, t.directoryId, t.userNameKey),
    uniqueIndex("scim_users_external_id_uq").on(t.workspaceId, t.directoryId, t.externalId).where(sql`${t.externalId} is not null`),
    uniqueIndex("scim_users_account_uq").on(t.workspaceId, t.directoryId, t.userId),
    index("scim_users_email_idx").on(t.workspaceId, t.directoryId, t.emailKey),
    index("scim_users_created_idx").on(t.workspaceId, t.directoryId, t.createdAt, t.id),
  ],
);

export const scimGroups = pgTable(
  "scim_groups",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    directoryId: text("directory_id").notNull().references(() => scimDirectories.id, { onDelete: "cascade" }),
    displayName: text("display_name").notNull(),
    /** Lower case: what the role mapping and filters compare. */
    displayNameKey: text("display_name_key").notNull(),
    externalId: text("external_id"),
    attributes: jsonb("attributes").$type<Record<string, unknown>>().notNull(),
    version: integer("version").notNull().default(1),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("scim_groups_display_name_uq").on(t.workspaceId, t.directoryId, t.displayNameKey),
    index("scim_groups_created_idx").on(t.workspaceId, t.directoryId, t.createdAt, t.id),
  ],
);

export const scimGroupMembers = pgTable(
  "scim_group_members",
  {
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    groupId: text("group_id").notNull().references(() => scimGroups.id, { onDelete: "cascade" }),
    scimUserId: text("scim_user_id").notNull().references(() => scimUsers.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.scimUserId] }), index("scim_group_members_user_idx").on(t.workspaceId, t.scimUserId)],
);

/** A directory's requests as its administrators see them (the last 100 are kept): never a body or a token. */
export const scimRequests = pgTable(
  "scim_requests",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    directoryId: text("directory_id").notNull().references(() => scimDirectories.id, { onDelete: "cascade" }),
    at: ts("at").notNull(),
    method: text("method").notNull(),
    /** Below the directory's base URL, without the query. */
    path: text("path").notNull(),
    status: integer("status").notNull(),
    /** The SCIM error's scimType or detail, for a refusal. */
    detail: text("detail"),
  },
  (t) => [index("scim_requests_directory_idx").on(t.workspaceId, t.directoryId, t.at)],
);
