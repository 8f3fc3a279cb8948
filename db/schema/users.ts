import { boolean, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { workspaces } from "./workspaces";

export const users = pgTable(
  "users",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    /** Lower-cased email: the sign-in lookup key. */
    emailNormalized: text("email_normalized").notNull(),
    emailVerified: boolean("email_verified").notNull().default(false),
    name: text("name"),
    /** argon2id PHC string; null for accounts without a local password. */
    passwordHash: text("password_hash"),
    /**
     * The password was set before anyone proved the mailbox (an operator account made by the
     * invitation flow of earlier releases). It is refused on its own, and discarded when the
     * mailbox is proven (lib/console/operator-accounts.ts).
     */
    passwordUnproven: boolean("password_unproven").notNull().default(false),
    /**
     * The password hash that a sign-in found known from breaches (lib/authn/passwords/breached.ts):
     * the account still signs in with a breached password while it equals `password_hash`; any new
     * password ends that without touching this column.
     */
    breachedPasswordHash: text("breached_password_hash"),
    status: text("status", { enum: ["active", "disabled"] }).notNull().default("active"),
    /** The language of the account's last completed sign-in (lib/i18n): its security alerts are written in it. */
    locale: text("locale"),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("users_workspace_email_uq").on(t.workspaceId, t.emailNormalized),
    index("users_workspace_created_idx").on(t.workspaceId, t.createdAt),
  ],
);
