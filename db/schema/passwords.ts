import { pgTable, smallint, text } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { workspaces } from "./workspaces";

/**
 * A workspace's password policy (lib/passwords): how a new password is screened, and whether a user may reset a forgotten one. A workspace
 * without a row has the defaults (no screening), as SPEC.md describes.
 */
export const passwordPolicies = pgTable("password_policies", {
  workspaceId: text("workspace_id")
    .primaryKey()
    .references(() => workspaces.id, { onDelete: "cascade" }),
  /**
   * Screening of every new password: null is off; 0–4 is on, refusing a password of the bundled
   * list of common and breached passwords, one the breach range service knows (where the
   * installation configures one), and one zxcvbn scores below this.
   */
  screeningMinimumScore: smallint("screening_minimum_score"),
  /**
   * Self-service password reset (lib/authn/passwords/reset.ts): `off`, or `email` (a user who
   * proves the account's mailbox with a one-time code chooses a new password, after the account's
   * second factor when it holds one).
   */
  reset: text("reset", { enum: ["off", "email"] }).notNull().default("off"),
  updatedAt: ts("updated_at").notNull(),
});
