import { index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { organizations } from "./organizations";
import { workspaces } from "./workspaces";

/**
 * A setup link of an organization's admin portal (lib/organizations/admin-portal): made by a
 * workspace administrator for one address of the customer's IT, valid until `expires_at`, used once
 * to start (the mailbox proven by a code sent to the address), revocable. Only the SHA-256 of the
 * link's 32-byte secret is stored. The purger deletes it 30 days after it ended.
 */
export const organizationPortalLinks = pgTable(
  "organization_portal_links",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** The address as typed (shown) and its key (lib/authn/email-address.ts `normalizeEmail`): the mailbox the opener proves. */
    email: text("email").notNull(),
    emailNormalized: text("email_normalized").notNull(),
    tokenHash: text("token_hash").notNull(),
    /** The operator who made it (a user of the system workspace), and their address when they did. */
    createdBy: text("created_by").notNull(),
    createdByEmail: text("created_by_email").notNull(),
    createdAt: ts("created_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    /** When the mailbox was proven and the portal opened: the link is used. */
    startedAt: ts("started_at"),
    revokedAt: ts("revoked_at"),
    revokedBy: text("revoked_by"),
  },
  (t) => [uniqueIndex("organization_portal_links_token_uq").on(t.workspaceId, t.tokenHash), index("organization_portal_links_org_idx").on(t.workspaceId, t.organizationId, t.createdAt)],
);

/**
 * A browser's session of the admin portal, started from a setup link: scoped to the link's
 * organization and address; its cookie's secret stored as SHA-256 only. It ends at `expires_at`,
 * after an idle hour, when signed out, or at once when its link is revoked.
 */
export const organizationPortalSessions = pgTable(
  "organization_portal_sessions",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    linkId: text("link_id")
      .notNull()
      .references(() => organizationPortalLinks.id, { onDelete: "cascade" }),
    /** The proven address (normalized): whom its changes are recorded under. */
    email: text("email").notNull(),
    tokenHash: text("token_hash").notNull(),
    createdAt: ts("created_at").notNull(),
    lastSeenAt: ts("last_seen_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    endedAt: ts("ended_at"),
  },
  (t) => [uniqueIndex("organization_portal_sessions_token_uq").on(t.tokenHash), index("organization_portal_sessions_link_idx").on(t.linkId)],
);
