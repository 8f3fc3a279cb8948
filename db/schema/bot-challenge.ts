import { index, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { workspaces } from "./workspaces";

/**
 * A workspace's bot protection (lib/authn/bot-challenge): when the hosted sign-in asks a
 * proof of work. No row: `off`, as SPEC.md describes.
 */
export const botChallengePolicies = pgTable("bot_challenge_policies", {
  workspaceId: text("workspace_id")
    .primaryKey()
    .references(() => workspaces.id, { onDelete: "cascade" }),
  /** `off`; `adaptive`: only past the declared thresholds; `always`: every protected form. */
  mode: text("mode", { enum: ["off", "adaptive", "always"] }).notNull(),
  updatedAt: ts("updated_at").notNull(),
});

/**
 * Solved challenges, by the challenge's hash: each is accepted once (the insert is the claim),
 * until it expires; then the purger deletes the row.
 */
export const botChallengeSolutions = pgTable(
  "bot_challenge_solutions",
  {
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
    challenge: text("challenge").notNull(),
    expiresAt: ts("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.challenge] }), index("bot_challenge_solutions_expiry_idx").on(t.workspaceId, t.expiresAt)],
);
