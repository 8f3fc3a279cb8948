import { boolean, index, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { users } from "./users";
import { workspaces } from "./workspaces";

export const organizations = pgTable(
  "organizations",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    /** Stable identifier used in the workspace file and in `organization_id` claims. */
    slug: text("slug").notNull(),
    name: text("name").notNull(),
    active: boolean("active").notNull().default(true),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [uniqueIndex("organizations_workspace_slug_uq").on(t.workspaceId, t.slug)],
);

export const organizationMembers = pgTable(
  "organization_members",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    /**
     * What made this membership: an administrator (console, API), the workspace file, the
     * user's own sign-in through one of the organization's connections (just in time), or the
     * organization's directory (SCIM provisioning, lib/organizations/scim). A workspace
     * import removes only what it manages unless it is asked to prune.
     */
    origin: text("origin", { enum: ["console", "workspace_file", "sign_in", "invitation", "directory"] }).notNull().default("console"),
    /**
     * An administrator of the organization: invites people to it, lists and withdraws its pending
     * invitations (lib/organizations/invitations). Set by a workspace administrator (the console, the
     * workspace file) or by the invitation the member accepted.
     */
    administrator: boolean("administrator").notNull().default(false),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("organization_members_uq").on(t.workspaceId, t.organizationId, t.userId),
    index("organization_members_user_idx").on(t.workspaceId, t.userId),
  ],
);

/** Enterprise sign-in configuration of an organization (OIDC or SAML upstream). */
export const enterpriseConnections = pgTable(
  "enterprise_connections",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    kind: text("kind", { enum: ["oidc", "saml"] }).notNull(),
    active: boolean("active").notNull().default(true),
    /** Non-secret settings: OIDC issuer and client id; SAML identity provider, certificates, attribute mapping, SP certificate (lib/federation/upstream/saml-settings.ts). */
    config: jsonb("config").$type<Record<string, unknown>>().notNull().default({}),
    /** OIDC: the upstream client secret; SAML: this connection's SP private key (PEM). AES-256-GCM under the master key. */
    secretEncrypted: text("secret_encrypted"),
    /** Roles (ids, organization-level) a member gets when the connection first adds them (just-in-time). */
    defaultRoleIds: jsonb("default_role_ids").$type<string[]>().notNull().default([]),
    /** Whether the upstream's `amr`/`acr` saying MFA counts as MFA here (otherwise it is recorded as one federated sign-in). */
    trustUpstreamMfa: boolean("trust_upstream_mfa").notNull().default(false),
    /**
     * Who a first sign-in through this connection admits: only addresses in the organization's
     * verified domains (the default), or anyone the upstream vouches for (an explicit, audited choice).
     */
    admission: text("admission", { enum: ["verified_domains", "any_vouched"] }).notNull().default("verified_domains"),
    /** The last sign-in through it, and the last failure with the condition that failed (for its administrators, never shown to users). */
    lastSuccessAt: ts("last_success_at"),
    lastFailureAt: ts("last_failure_at"),
    lastFailure: text("last_failure"),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [index("enterprise_connections_org_idx").on(t.workspaceId, t.organizationId)],
);
