import { bigint, boolean, index, integer, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
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
    /** Whether the credential is backed up (synced passkey), as the authenticator reported. */
    backedUp: boolean("backed_up").notNull().default(false),
    createdAt: ts("created_at").notNull(),
    lastUsedAt: ts("last_used_at"),
    /** Set when an assertion's signature counter went backwards: a possible clone; the credential is refused. */
    flaggedAt: ts("flagged_at"),
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
    /** Null until enrolment is completed with a valid code; unconfirmed factors never verify a sign-in. */
    confirmedAt: ts("confirmed_at"),
    lastUsedAt: ts("last_used_at"),
  },
  (t) => [index("totp_factors_user_idx").on(t.workspaceId, t.userId)],
);

export const recoveryCodes = pgTable(
  "recovery_codes",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    /** The code's public first part: finds its row, so an attempt costs one argon2id verification, not one per code. */
    lookup: text("lookup").notNull(),
    /** argon2id of the code's secret part. */
    codeHash: text("code_hash").notNull(),
    createdAt: ts("created_at").notNull(),
    usedAt: ts("used_at"),
  },
  (t) => [uniqueIndex("recovery_codes_lookup_uq").on(t.workspaceId, t.userId, t.lookup)],
);

/**
 * A one-time challenge of a factor: an email code (its hash, attempts, the address it was sent
 * to) or a WebAuthn challenge. Bound to what it was issued for (`purpose` + `bindingId`: a
 * pending sign-in, a sign-up, an enrolment); consumed once with a conditional UPDATE.
 */
export const factorChallenges = pgTable(
  "factor_challenges",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["email_otp", "webauthn"] }).notNull(),
    /** What the challenge is bound to, e.g. "sign_in" with the transaction id. */
    purpose: text("purpose").notNull(),
    bindingId: text("binding_id").notNull(),
    userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
    /** The normalized email address a code was sent to. */
    address: text("address"),
    /** SHA-256 of an email code (keyed), or the WebAuthn challenge itself (not a secret). */
    secret: text("secret").notNull(),
    attempts: integer("attempts").notNull().default(0),
    createdAt: ts("created_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    consumedAt: ts("consumed_at"),
  },
  (t) => [
    index("factor_challenges_binding_idx").on(t.workspaceId, t.purpose, t.bindingId),
    index("factor_challenges_expiry_idx").on(t.expiresAt),
    // The resend cooldown asks for the latest code sent to an address.
    index("factor_challenges_address_idx").on(t.workspaceId, t.address, t.createdAt),
  ],
);

/**
 * The development outbox: messages that would have been sent by email when no SMTP server is
 * configured. Bodies carry one-time codes, so they are stored encrypted under the master key.
 */
export const mailOutbox = pgTable(
  "mail_outbox",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    recipient: text("recipient").notNull(),
    subject: text("subject_encrypted").notNull(),
    text: text("text_encrypted").notNull(),
    html: text("html_encrypted").notNull(),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [index("mail_outbox_workspace_idx").on(t.workspaceId, t.createdAt)],
);
