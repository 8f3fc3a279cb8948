import { boolean, index, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { clients } from "./applications";
import { ts } from "./common";
import { organizations } from "./organizations";
import { workspaces } from "./workspaces";

/**
 * An invitation to join an organization (lib/organizations/invitations): sent by email to one
 * address, with the roles and the administrator flag the member gets on accepting. The link's
 * secret is 32 random bytes, stored only as its SHA-256; it is replaced (the old link dead) when the
 * invitation is sent again. At most one pending invitation per organization and address. Pending
 * until accepted or withdrawn, and past `expires_at` it can no longer be accepted; the purger
 * deletes it 30 days after it ended.
 */
export const organizationInvitations = pgTable(
  "organization_invitations",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** The address as the inviter typed it (shown), and its key (lib/authn/email-address.ts `normalizeEmail`). */
    email: text("email").notNull(),
    emailNormalized: text("email_normalized").notNull(),
    /** Organization-level roles of the workspace (ids) the member gets. */
    roleIds: jsonb("role_ids").$type<string[]>().notNull().default([]),
    administrator: boolean("administrator").notNull().default(false),
    /** The application the confirmation page offers to continue to (optional). */
    clientPk: text("client_pk").references(() => clients.id, { onDelete: "set null" }),
    /** SHA-256 (hex) of the link's secret. */
    tokenHash: text("token_hash").notNull(),
    /** Who sent it (last): an operator (a user of the system workspace) or an administrator of the organization (a user of the workspace). */
    invitedByKind: text("invited_by_kind", { enum: ["operator", "organization_administrator"] }).notNull(),
    invitedBy: text("invited_by").notNull(),
    createdAt: ts("created_at").notNull(),
    /** When the link now valid was sent. */
    sentAt: ts("sent_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    state: text("state", { enum: ["pending", "accepted", "withdrawn"] }).notNull().default("pending"),
    acceptedAt: ts("accepted_at"),
    /** The account that joined. */
    acceptedBy: text("accepted_by"),
    withdrawnAt: ts("withdrawn_at"),
    withdrawnBy: text("withdrawn_by"),
  },
  (t) => [
    uniqueIndex("organization_invitations_token_uq").on(t.workspaceId, t.tokenHash),
    uniqueIndex("organization_invitations_pending_uq").on(t.workspaceId, t.organizationId, t.emailNormalized).where(sql`${t.state} = 'pending'`),
    index("organization_invitations_org_idx").on(t.workspaceId, t.organizationId, t.state),
  ],
);
