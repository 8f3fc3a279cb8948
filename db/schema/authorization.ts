import { boolean, index, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { apis } from "./apis";
import { clients, clientSecrets } from "./applications";
import { hostedSessions, type StoredEvidence } from "./sessions";
import { users } from "./users";
import { enterpriseConnections, organizations } from "./organizations";
import { workspaces } from "./workspaces";

/** A validated authorization request waiting for the user to authenticate (10 minutes). */
export const authorizationTransactions = pgTable(
  "authorization_transactions",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    clientPk: text("client_pk").notNull().references(() => clients.id, { onDelete: "cascade" }),
    redirectUri: text("redirect_uri").notNull(),
    scope: jsonb("scope").$type<string[]>().notNull(),
    state: text("state").notNull(),
    nonce: text("nonce").notNull(),
    codeChallenge: text("code_challenge").notNull(),
    apiId: text("api_id").references(() => apis.id, { onDelete: "cascade" }),
    /** SHA-256 of the secret held in the browser's transaction cookie. */
    browserBindingHash: text("browser_binding_hash").notNull(),
    createdAt: ts("created_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    completedAt: ts("completed_at"),
    /**
     * The sign-in in progress (lib/sign-in/flow.ts): the user the first factor identified, and
     * what they have proved so far in this transaction. The hosted session is created (or the
     * live one in `sessionId` is stepped up) only when the application's policy is met.
     */
    userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
    evidence: jsonb("evidence").$type<StoredEvidence[]>().notNull().default([]),
    /** A live hosted session that does not meet this application's policy and is being stepped up. */
    sessionId: text("session_id").references(() => hostedSessions.id, { onDelete: "cascade" }),
    /** Recovery codes generated during this sign-in, encrypted under the master key until the user has seen them. */
    recoveryCodesEncrypted: text("recovery_codes_encrypted"),
    /** The user answered the passkey enrolment offer (added one, or chose "not now"). */
    passkeyOfferAnswered: boolean("passkey_offer_answered").notNull().default(false),
    /**
     * Self-service sign-up (lib/sign-in/sign-up.ts): the address this browser proved with an email
     * code and no account held yet; the account is created with it once the user chooses a
     * credential. No account exists before this is set.
     */
    /**
     * What completing the sign-in does: `authorize` issues the authorization code to the client;
     * `account` (the account-security portal) only establishes the hosted session and sends the
     * browser to `returnTo`, a path under the issuer: no code, no grant, no application login;
     * `try` (an operator trying the application's sign-in from the console) records the user and
     * hosted session here and sends the browser to `returnTo`, a console page: no code, no grant.
     */
    purpose: text("purpose", { enum: ["authorize", "account", "try", "device"] }).notNull().default("authorize"),
    returnTo: text("return_to"),
    signUpAddress: text("sign_up_address"),
    /** The sign-up chose a passkey: the sign-in asks for one before it completes. */
    signUpWithPasskey: boolean("sign_up_with_passkey").notNull().default(false),
    /**
     * Federation (lib/federation): the organization and enterprise connection the user signed in
     * through, carried to the hosted session the sign-in creates.
     */
    organizationId: text("organization_id").references(() => organizations.id, { onDelete: "cascade" }),
    connectionId: text("connection_id").references(() => enterpriseConnections.id, { onDelete: "cascade" }),
    /** An upstream identity whose email matches a local account: linked only once the user proves that account. */
    federatedLink: jsonb("federated_link").$type<PendingFederatedLink>(),
    /**
     * The address the password form last posted without success, shown again in the form so the
     * user does not retype it (never in the URL). Bound to the browser like the transaction, and
     * cleared when a password succeeds and when the sign-in completes.
     */
    enteredAddress: text("entered_address"),
    /**
     * A new password this sign-in asks for (lib/authn/passwords/change.ts): `reset` after the
     * user proved the account's mailbox to reset a forgotten one; `breached` after a correct
     * password now known from a breach; `changed` once it replaced the old one (the page says so
     * once, then the sign-in goes on).
     */
    passwordChange: text("password_change", { enum: ["reset", "breached", "changed"] }),
    /** The new password's argon2id hash, chosen and waiting for what the account must still prove (its second factor) before it replaces the old one. */
    newPasswordHash: text("new_password_hash"),
    /** A protected form of this sign-in was refused for want of a proof of work: the page asks one from now on (lib/authn/bot-challenge). */
    botChallenged: boolean("bot_challenged").notNull().default(false),
    /** The workspace hostname the authorization request came to (lib/hostnames); null: the default host. */
    hostname: text("hostname"),
  },
  (t) => [index("authorization_transactions_expiry_idx").on(t.workspaceId, t.expiresAt)],
);

/** A grant is one authorization of a client by a user in a hosted session: the refresh family. */
export const grants = pgTable(
  "grants",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    clientPk: text("client_pk").notNull().references(() => clients.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    sessionId: text("session_id").notNull().references(() => hostedSessions.id, { onDelete: "cascade" }),
    /**
     * For confidential clients, the secret last used with this grant (code exchange or refresh).
     * Its mere expiry is harmless; its explicit revocation (or immediate replacement) ends the grant.
     */
    credentialId: text("credential_id").references(() => clientSecrets.id, { onDelete: "cascade" }),
    /** The family's scope ceiling. */
    scope: jsonb("scope").$type<string[]>().notNull(),
    apiId: text("api_id").references(() => apis.id, { onDelete: "cascade" }),
    /**
     * The pairwise subject of the family's user for its client, as its tokens carry it: refresh
     * rotation issues in one statement, and the subject's key must not reach the database. Null
     * for families created before it was stored (set by their next rotation).
     */
    subject: text("subject"),
    /**
     * The workspace hostname of the issuer the grant was made under (lib/hostnames); null: the
     * default host. Its tokens are answered under that issuer only.
     */
    hostname: text("hostname"),
    createdAt: ts("created_at").notNull(),
    lastUsedAt: ts("last_used_at").notNull(),
    /** Inactivity bound (7 days after last use) and absolute bound (30 days after creation). */
    idleExpiresAt: ts("idle_expires_at").notNull(),
    absoluteExpiresAt: ts("absolute_expires_at").notNull(),
    revokedAt: ts("revoked_at"),
    revokeReason: text("revoke_reason"),
    /**
     * The DPoP key (RFC 7638 thumbprint) a public client's family is bound to (RFC 9449 §5): set at
     * the code exchange when it carried a proof; every refresh must then prove the same key
     * (lib/oauth/dpop). Null: unbound.
     */
    dpopJkt: text("dpop_jkt"),
  },
  (t) => [
    index("grants_session_idx").on(t.workspaceId, t.sessionId),
    index("grants_user_idx").on(t.workspaceId, t.userId),
  ],
);

export const authorizationCodes = pgTable(
  "authorization_codes",
  {
    /** SHA-256 of the code. */
    codeHash: text("code_hash").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    clientPk: text("client_pk").notNull().references(() => clients.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    sessionId: text("session_id").notNull().references(() => hostedSessions.id, { onDelete: "cascade" }),
    redirectUri: text("redirect_uri").notNull(),
    scope: jsonb("scope").$type<string[]>().notNull(),
    nonce: text("nonce").notNull(),
    codeChallenge: text("code_challenge").notNull(),
    apiId: text("api_id").references(() => apis.id, { onDelete: "cascade" }),
    createdAt: ts("created_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    consumedAt: ts("consumed_at"),
    /**
     * The grant the first redemption creates, revoked if the code is presented again. No foreign
     * key: it is fixed when the code is consumed, before the grant row exists.
     */
    grantId: text("grant_id"),
  },
  (t) => [index("authorization_codes_expiry_idx").on(t.workspaceId, t.expiresAt)],
);

export const refreshTokens = pgTable(
  "refresh_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    grantId: text("grant_id").notNull().references(() => grants.id, { onDelete: "cascade" }),
    state: text("state", { enum: ["current", "superseded"] }).notNull().default("current"),
    createdAt: ts("created_at").notNull(),
    supersededAt: ts("superseded_at"),
    replacedByHash: text("replaced_by_hash"),
  },
  (t) => [index("refresh_tokens_grant_idx").on(t.workspaceId, t.grantId)],
);

/**
 * Opaque access tokens, human (grant set) or workload (credential set). The hottest insert of the
 * service and the shortest-lived row (5 minutes), so no foreign keys: each one cost an index probe
 * and a shared lock on its parent row per token (contended on the client, credential and API rows
 * under load). Nothing is lost by it: every read of a token joins its whole authority chain
 * (lib/authority/statements.ts), and a token whose client, grant, session, user, credential or API is
 * gone is not active; rows are only ever inserted by the grants, from rows they just read.
 */
export const accessTokens = pgTable(
  "access_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    clientPk: text("client_pk").notNull(),
    grantId: text("grant_id"),
    userId: text("user_id"),
    sessionId: text("session_id"),
    /** The client secret that obtained a workload token; the token dies with it. */
    credentialId: text("credential_id"),
    /** The pairwise subject as issued. */
    subject: text("subject").notNull(),
    scope: jsonb("scope").$type<string[]>().notNull(),
    apiId: text("api_id"),
    createdAt: ts("created_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    revokedAt: ts("revoked_at"),
    /** The DPoP key (RFC 7638 thumbprint) the token is bound to (RFC 9449, `cnf.jkt`); null: a bearer token. */
    dpopJkt: text("dpop_jkt"),
  },
  (t) => [index("access_tokens_grant_idx").on(t.workspaceId, t.grantId), index("access_tokens_expiry_idx").on(t.expiresAt)],
);

/**
 * Revoked workload (M2M) access tokens: the deny list. Workload tokens are sealed and never
 * stored (lib/oauth/workload-token.ts), so a revocation records the token's id here until the
 * token's own expiry; every reader of a workload token checks it in the same statement as the
 * rest of its authority. Rows are purged an hour after `expires_at`, like access tokens.
 */
export const revokedWorkloadTokens = pgTable(
  "revoked_workload_tokens",
  {
    tokenId: text("token_id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    clientPk: text("client_pk").notNull(),
    expiresAt: ts("expires_at").notNull(),
    revokedAt: ts("revoked_at").notNull(),
  },
  (t) => [index("revoked_workload_tokens_expiry_idx").on(t.expiresAt)],
);

/** An upstream identity waiting on the pending sign-in for the user to prove the local account with its email. */
export interface PendingFederatedLink {
  /** The local account the upstream's email matches. */
  userId: string;
  connectionId: string | null;
  socialProviderId: string | null;
  organizationId: string | null;
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  /** The upstream's MFA, when the connection trusts it. */
  upstreamMfa: boolean;
  /** The upstream's acr (SAML: AuthnContextClassRef), as sent. */
  upstreamAcr?: string | null;
}
