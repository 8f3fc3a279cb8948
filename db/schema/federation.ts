/**
 * Federation (lib/federation): sign-in through an organization's enterprise connection or a
 * workspace's social provider, the email domains organizations claim for home-realm discovery,
 * the upstream identities linked to users, and the upstream round trips in flight.
 */
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { ts } from "./common";
import { clients } from "./applications";
import { authorizationTransactions } from "./authorization";
import { enterpriseConnections, organizations } from "./organizations";
import { users } from "./users";
import { workspaces } from "./workspaces";

/**
 * An email domain an organization claims. Once verified (a DNS TXT record the console checks, or
 * an operator's audited word), an address in it signs in through the organization's connection.
 * One organization per domain per workspace.
 */
export const organizationDomains = pgTable(
  "organization_domains",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    organizationId: text("organization_id").notNull().references(() => organizations.id, { onDelete: "cascade" }),
    /** Lower-case, no trailing dot. */
    domain: text("domain").notNull(),
    /** The random value the TXT record must carry (not a secret: it is published in DNS). */
    verificationToken: text("verification_token").notNull(),
    verifiedAt: ts("verified_at"),
    /** `dns`: the TXT record was found; `operator`: an operator marked it verified (audited). */
    verificationMethod: text("verification_method", { enum: ["dns", "operator"] }),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [uniqueIndex("organization_domains_workspace_domain_uq").on(t.workspaceId, t.domain), index("organization_domains_org_idx").on(t.workspaceId, t.organizationId)],
);

export const SOCIAL_PRESETS = ["google", "microsoft", "apple", "github", "oidc"] as const;
export type SocialPreset = (typeof SOCIAL_PRESETS)[number];

/**
 * A workspace's social (or generic OpenID Connect) provider. `config` holds the non-secret
 * settings a preset allows to change (endpoints, issuer, tenant, Apple's team and key ids, extra
 * scopes); the client secret (for Apple: the private key) is AES-256-GCM under the master key.
 */
export const socialProviders = pgTable(
  "social_providers",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    /** Stable identifier in the workspace file and the application settings. */
    key: text("key").notNull(),
    preset: text("preset", { enum: SOCIAL_PRESETS }).notNull(),
    /** The button's label ("Google", "Contoso ID"). */
    name: text("name").notNull(),
    enabled: boolean("enabled").notNull().default(true),
    /** The button order on the hosted sign-in page, lowest first. */
    position: integer("position").notNull().default(0),
    clientId: text("client_id").notNull(),
    secretEncrypted: text("secret_encrypted"),
    config: jsonb("config").$type<Record<string, unknown>>().notNull().default({}),
    createdAt: ts("created_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [uniqueIndex("social_providers_workspace_key_uq").on(t.workspaceId, t.key)],
);

/** Which social providers an application offers on its sign-in page. */
export const clientSocialProviders = pgTable(
  "client_social_providers",
  {
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    clientPk: text("client_pk").notNull().references(() => clients.id, { onDelete: "cascade" }),
    providerId: text("provider_id").notNull().references(() => socialProviders.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.clientPk, t.providerId] }), index("client_social_providers_ws_idx").on(t.workspaceId, t.clientPk)],
);

/**
 * An upstream identity linked to a user, keyed by the exact upstream `(iss, sub)` (SPEC
 * "Identity mapping"). Email and name are what the upstream last said, as it said them.
 */
export const federatedIdentities = pgTable(
  "federated_identities",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    /** Where it came from (one of the two is set); removing the source keeps the link's record out of use. */
    connectionId: text("connection_id").references(() => enterpriseConnections.id, { onDelete: "set null" }),
    socialProviderId: text("social_provider_id").references(() => socialProviders.id, { onDelete: "set null" }),
    /**
     * The connection or provider the identity is known through (`connection:<id>` or
     * `social:<id>`); kept when the source is removed. Identities are keyed per source: the same
     * upstream `(iss, sub)` through another organization's connection is another admission.
     */
    source: text("source").notNull(),
    issuer: text("issuer").notNull(),
    subject: text("subject").notNull(),
    email: text("email"),
    emailVerified: boolean("email_verified").notNull().default(false),
    name: text("name"),
    /**
     * How the upstream said it authenticated the user at the last sign-in (OIDC `acr`, SAML
     * `AuthnContextClassRef`), as sent: kept for administrators; it counts for MFA only through a
     * connection that trusts its upstream's MFA (lib/federation/identities.ts).
     */
    upstreamAcr: text("upstream_acr"),
    createdAt: ts("created_at").notNull(),
    lastSignInAt: ts("last_sign_in_at"),
  },
  (t) => [uniqueIndex("federated_identities_ws_source_iss_sub_uq").on(t.workspaceId, t.source, t.issuer, t.subject), index("federated_identities_user_idx").on(t.workspaceId, t.userId)],
);

/**
 * One round trip to an upstream provider (10 minutes, consumed once): the `state` (SAML's
 * RelayState), and the OAuth `nonce` and PKCE verifier or the SAML AuthnRequest's id, for the
 * pending sign-in that started it (whose browser cookie the callback must carry). Only the state's
 * hash is stored; the verifier is encrypted under the master key. A SAML response arrives as a
 * cross-site POST without the browser's cookies: it is verified there and its identity kept here
 * (`answer`, once: `answered_at`) until the browser's same-site GET consumes the round trip.
 */
export const federationTransactions = pgTable(
  "federation_transactions",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    /**
     * `sign_in`: bound to the pending sign-in `transactionId`. `test`: an administrator's test of a
     * connection (lib/federation/connection-test), bound to the browser holding the secret whose
     * hash is `browserBindingHash`; it signs no one in.
     */
    purpose: text("purpose", { enum: ["sign_in", "test"] }).notNull().default("sign_in"),
    transactionId: text("transaction_id").references(() => authorizationTransactions.id, { onDelete: "cascade" }),
    /** A test: who started it (`{ kind, id, email }`), and the page it was started from when its result links back there (`back`, the admin portal's). */
    tester: jsonb("tester").$type<{ kind: "operator" | "organization_portal"; id: string; email: string; back?: string }>(),
    /** A test: SHA-256 of the secret in the tester's browser cookie. */
    browserBindingHash: text("browser_binding_hash"),
    connectionId: text("connection_id").references(() => enterpriseConnections.id, { onDelete: "cascade" }),
    socialProviderId: text("social_provider_id").references(() => socialProviders.id, { onDelete: "cascade" }),
    stateHash: text("state_hash").notNull(),
    /** OAuth: the nonce sent upstream. */
    nonce: text("nonce"),
    /** OAuth: the PKCE verifier, encrypted under the master key. */
    codeVerifierEncrypted: text("code_verifier_encrypted"),
    /** SAML: the AuthnRequest's ID, which the response's InResponseTo must name. */
    requestId: text("request_id"),
    /** SAML: the verified identity the response asserted, awaiting the browser (a test's: with everything the assertion carried, `received`, or `{ failure }`, the condition that failed). */
    answer: jsonb("answer").$type<Record<string, unknown>>(),
    answeredAt: ts("answered_at"),
    createdAt: ts("created_at").notNull(),
    expiresAt: ts("expires_at").notNull(),
    consumedAt: ts("consumed_at"),
  },
  (t) => [uniqueIndex("federation_transactions_state_uq").on(t.workspaceId, t.stateHash), index("federation_transactions_expiry_idx").on(t.workspaceId, t.expiresAt)],
);

/**
 * SAML assertions already accepted, by their ID per connection, until their `NotOnOrAfter` (plus
 * the clock skew allowed): a replayed response is refused even when its round trip is another's.
 */
export const samlAssertionReplays = pgTable(
  "saml_assertion_replays",
  {
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
    connectionId: text("connection_id").notNull().references(() => enterpriseConnections.id, { onDelete: "cascade" }),
    assertionId: text("assertion_id").notNull(),
    expiresAt: ts("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.connectionId, t.assertionId] }), index("saml_assertion_replays_expiry_idx").on(t.expiresAt)],
);
