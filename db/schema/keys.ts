import { sql } from "drizzle-orm";
import { index, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { workspaces } from "./workspaces";

/** ES256 signing keys per workspace; the private JWK is AES-256-GCM encrypted under the master key. */
export const signingKeys = pgTable(
  "signing_keys",
  {
    kid: text("kid").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    alg: text("alg").notNull().default("ES256"),
    publicJwk: jsonb("public_jwk").$type<Record<string, unknown>>().notNull(),
    privateJwkEncrypted: text("private_jwk_encrypted").notNull(),
    /** published: in JWKS, not signing yet; active: signs; retired: published until unpublishAt. */
    status: text("status", { enum: ["published", "active", "retired"] }).notNull(),
    createdAt: ts("created_at").notNull(),
    activatedAt: ts("activated_at"),
    retiredAt: ts("retired_at"),
    unpublishAt: ts("unpublish_at"),
  },
  (t) => [
    index("signing_keys_workspace_idx").on(t.workspaceId, t.status),
    // At most one signing key per workspace: concurrent first uses cannot create two.
    uniqueIndex("signing_keys_one_active_uq").on(t.workspaceId).where(sql`status = 'active'`),
  ],
);
