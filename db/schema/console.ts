import { index, pgTable, text } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { grants } from "./authorization";
import { hostedSessions } from "./sessions";
import { users } from "./users";

/**
 * A console sign-in in progress: state, nonce and PKCE verifier of the console's own
 * authorization request, kept server-side and bound to the browser by an HttpOnly cookie whose
 * hash is stored. Consumed once, by one conditional update, at the callback.
 */
export const consoleLoginTransactions = pgTable(
  "console_login_transactions",
  {
    id: text("id").primaryKey(),
    /** SHA-256 of the secret held in the browser's `lk_console_tx` cookie. */
    bindingHash: text("binding_hash").notNull(),
    state: text("state").notNull(),
    nonce: text("nonce").notNull(),
    /** The PKCE verifier, AES-256-GCM under the master key. */
    codeVerifierEncrypted: text("code_verifier_encrypted").notNull(),
    /** A console path to return to after sign-in (always under /console). */
    returnTo: text("return_to").notNull(),
    createdAt: ts("created_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    consumedAt: ts("consumed_at"),
  },
  (t) => [index("console_login_transactions_expiry_idx").on(t.expiresAt)],
);

/**
 * An operator's console session, bound to the grant of the console's code exchange and to the
 * hosted session it came from: it lasts only while both do, and while the operator is active.
 * The cookie carries `<id>.<secret>`; only SHA-256 of the secret is stored.
 */
export const consoleSessions = pgTable(
  "console_sessions",
  {
    id: text("id").primaryKey(),
    secretHash: text("secret_hash").notNull(),
    operatorUserId: text("operator_user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    grantId: text("grant_id").notNull().references(() => grants.id, { onDelete: "cascade" }),
    hostedSessionId: text("hosted_session_id").notNull().references(() => hostedSessions.id, { onDelete: "cascade" }),
    createdAt: ts("created_at").notNull(),
    lastSeenAt: ts("last_seen_at").notNull(),
    /** Sliding inactivity bound, capped by `expiresAt`. */
    idleExpiresAt: ts("idle_expires_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    endedAt: ts("ended_at"),
    endReason: text("end_reason"),
    ip: text("ip"),
    userAgent: text("user_agent"),
  },
  (t) => [index("console_sessions_operator_idx").on(t.operatorUserId), index("console_sessions_grant_idx").on(t.grantId)],
);
