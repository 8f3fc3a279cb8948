import { bigint, index, integer, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { users } from "./users";
import { workspaces } from "./workspaces";

export const webauthnCredentials = pgTable(
  "webauthn_credentials",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    /** base64url credential ID. */
    credentialId: text("credential_id").notNull(),
    publicKey: text("public_key").notNull(),
    counter: bigint("counter", { mode: "number" }).notNull().default(0),
    transports: jsonb("transports").$type<string[]>().notNull().default([]),
    kind: text("kind", { enum: ["passkey", "security_key"] }).notNull(),
    /** The hostname the credential was enrolled on (its RP ID). */
    rpId: text("rp_id").notNull(),
    name: text("name").notNull(),
    createdAt: ts("created_at").notNull(),
    lastUsedAt: ts("last_used_at"),
  },
  (t) => [
    uniqueIndex("webauthn_credentials_uq").on(t.workspaceId, t.credentialId),
    index("webauthn_credentials_user_idx").on(t.workspaceId, t.userId),
  ],
);

export const totpFactors = pgTable(
  "totp_factors",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    secretEncrypted: text("secret_encrypted").notNull(),
    name: text("name").notNull(),
    /** Last accepted time step: a step is consumed once. */
    lastUsedStep: integer("last_used_step"),
    createdAt: ts("created_at").notNull(),
    confirmedAt: ts("confirmed_at"),
  },
  (t) => [index("totp_factors_user_idx").on(t.workspaceId, t.userId)],
);

export const recoveryCodes = pgTable(
  "recovery_codes",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    codeHash: text("code_hash").notNull(),
    createdAt: ts("created_at").notNull(),
    usedAt: ts("used_at"),
  },
  (t) => [index("recovery_codes_user_idx").on(t.workspaceId, t.userId)],
);
