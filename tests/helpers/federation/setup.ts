/**
 * Federation in a downstream test workspace: through the workspace file (`seedWithSecrets`: its
 * organizations' domains and connections, social providers, applications' providers), or row by
 * row where a test needs what the file cannot say (an unverified domain, a change mid-test): an
 * organization's OIDC connection (secret sealed under the master key as
 * lib/federation/providers.ts opens it), its email domains, social providers offered by
 * applications. And the browser's side of a federated sign-in (the redirect upstream, the callback
 * delivered back with this browser's cookies), the hosted error page, and what a sign-in created.
 */
import { and, eq, inArray } from "drizzle-orm";
import { expect } from "vitest";
import {
  authorizationCodes,
  clients,
  clientSocialProviders,
  enterpriseConnections,
  federatedIdentities,
  hostedSessions,
  organizationDomains,
  organizationMembers,
  organizations,
  roles,
  socialProviders,
  users,
  type SocialPreset,
} from "../../../db/schema";
import { encryptSecret, newId } from "../../../lib/crypto";
import { connectionSecretPurpose, socialSecretPurpose } from "../../../lib/federation/secrets";
import { HOSTED_ERRORS, hostedErrorText, type HostedErrorCode } from "../../../lib/hosted/errors";
import { escapeHtml } from "../../../lib/hosted/html";
import { importWorkspace } from "../../../lib/workspaces/file";
import { generateSpKeyPair } from "../../../lib/federation/upstream/self-signed-certificate";
import type { SamlConfig } from "../../../lib/federation/upstream/saml-settings";
import { call, PUBLIC_URL, type Harness } from "../harness";
import { postStep, type PendingSignIn } from "../factors/sign-in";

export const callbackUrlOf = (workspaceId: string) => `${PUBLIC_URL}/t/${workspaceId}/federation/callback`;

export async function organizationIdOf(h: Harness, workspaceId: string, slug: string): Promise<string> {
  const [row] = await h.service.db.select({ id: organizations.id }).from(organizations).where(and(eq(organizations.workspaceId, workspaceId), eq(organizations.slug, slug)));
  if (!row) throw new Error(`no organization ${slug}`);
  return row.id;
}

/**
 * Seeds from the workspace file like the harness's `seed`, with the environment its upstream
 * secret references (`client_secret: { env }`) are read from.
 */
export async function seedWithSecrets(h: Harness, doc: object, env: Record<string, string>): Promise<void> {
  await importWorkspace(h.service.db, doc, { clock: h.clock, masterKey: h.service.config.masterKey, env });
  h.service.cache.clear();
}

export async function connectionIdOf(h: Harness, workspaceId: string, organizationSlug: string, name: string): Promise<string> {
  const [row] = await h.service.db
    .select({ id: enterpriseConnections.id })
    .from(enterpriseConnections)
    .where(and(eq(enterpriseConnections.workspaceId, workspaceId), eq(enterpriseConnections.organizationId, await organizationIdOf(h, workspaceId, organizationSlug)), eq(enterpriseConnections.name, name)));
  if (!row) throw new Error(`no connection ${name}`);
  return row.id;
}

export async function socialProviderIdOf(h: Harness, workspaceId: string, key: string): Promise<string> {
  const [row] = await h.service.db.select({ id: socialProviders.id }).from(socialProviders).where(and(eq(socialProviders.workspaceId, workspaceId), eq(socialProviders.key, key)));
  if (!row) throw new Error(`no social provider ${key}`);
  return row.id;
}

export async function roleIdsOf(h: Harness, workspaceId: string, names: string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const rows = await h.service.db.select({ id: roles.id, name: roles.name }).from(roles).where(and(eq(roles.workspaceId, workspaceId), inArray(roles.name, names)));
  return names.map((n) => {
    const row = rows.find((r) => r.name === n);
    if (!row) throw new Error(`no role ${n}`);
    return row.id;
  });
}

export interface ConnectionInput {
  organization: string;
  name?: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Role names, held in the organization by members the connection adds. */
  defaultRoles?: string[];
  trustUpstreamMfa?: boolean;
  active?: boolean;
  /** Who a first sign-in admits (default `verified_domains`: addresses in the organization's verified domains). */
  admission?: "verified_domains" | "any_vouched";
}

/** An OIDC enterprise connection of the organization (by slug); returns its id. */
export async function addConnection(h: Harness, workspaceId: string, input: ConnectionInput): Promise<string> {
  const id = newId();
  const now = h.clock.now();
  await h.service.db.insert(enterpriseConnections).values({
    id,
    workspaceId,
    organizationId: await organizationIdOf(h, workspaceId, input.organization),
    name: input.name ?? "Single sign-on",
    kind: "oidc",
    active: input.active ?? true,
    config: { issuer: input.issuer, client_id: input.clientId },
    secretEncrypted: encryptSecret(h.service.config.masterKey, input.clientSecret, connectionSecretPurpose(id)),
    defaultRoleIds: await roleIdsOf(h, workspaceId, input.defaultRoles ?? []),
    trustUpstreamMfa: input.trustUpstreamMfa ?? false,
    admission: input.admission ?? "verified_domains",
    createdAt: now,
    updatedAt: now,
  });
  return id;
}

export interface SamlConnectionInput {
  organization: string;
  name?: string;
  idp: { entityId: string; ssoUrl: string; certificatePem: string };
  /** A second identity-provider certificate (rotation). */
  nextCertificatePem?: string;
  signRequests?: boolean;
  allowSha1?: boolean;
  trustUpstreamMfa?: boolean;
  /** Role names, held in the organization by members the connection adds. */
  defaultRoles?: string[];
  admission?: "verified_domains" | "any_vouched";
  attributes?: { email: string; name?: string | null; given_name?: string | null; family_name?: string | null };
  nameIdFormat?: "persistent" | "emailAddress" | "unspecified";
}

/** A SAML enterprise connection of the organization (by slug), with a fresh SP key pair; its id and SP certificate. */
export async function addSamlConnection(h: Harness, workspaceId: string, input: SamlConnectionInput): Promise<{ id: string; spCertificatePem: string }> {
  const id = newId();
  const now = h.clock.now();
  const sp = generateSpKeyPair(`sp ${id}`, now);
  const config: SamlConfig = {
    idp_entity_id: input.idp.entityId,
    sso_url: input.idp.ssoUrl,
    idp_certificates: [input.idp.certificatePem, ...(input.nextCertificatePem ? [input.nextCertificatePem] : [])],
    metadata_url: null,
    sign_requests: input.signRequests ?? false,
    allow_sha1: input.allowSha1 ?? false,
    name_id_format: input.nameIdFormat ?? "persistent",
    attribute_preset: "custom",
    attributes: { email: "email", name: "name", given_name: null, family_name: null, ...input.attributes },
    idp_initiated_client_id: null,
    sp_certificate: sp.certificatePem,
  };
  await h.service.db.insert(enterpriseConnections).values({
    id,
    workspaceId,
    organizationId: await organizationIdOf(h, workspaceId, input.organization),
    name: input.name ?? "SAML single sign-on",
    kind: "saml",
    active: true,
    config,
    secretEncrypted: encryptSecret(h.service.config.masterKey, sp.privateKeyPem, connectionSecretPurpose(id)),
    defaultRoleIds: await roleIdsOf(h, workspaceId, input.defaultRoles ?? []),
    trustUpstreamMfa: input.trustUpstreamMfa ?? false,
    admission: input.admission ?? "verified_domains",
    createdAt: now,
    updatedAt: now,
  });
  return { id, spCertificatePem: sp.certificatePem };
}

export async function setSamlConfig(h: Harness, connectionId: string, change: Partial<SamlConfig>): Promise<void> {
  const [row] = await h.service.db.select({ config: enterpriseConnections.config }).from(enterpriseConnections).where(eq(enterpriseConnections.id, connectionId));
  await h.service.db.update(enterpriseConnections).set({ config: { ...row!.config, ...change } }).where(eq(enterpriseConnections.id, connectionId));
}

export async function setConnection(h: Harness, connectionId: string, set: Partial<Pick<typeof enterpriseConnections.$inferInsert, "active" | "trustUpstreamMfa" | "admission">>): Promise<void> {
  await h.service.db.update(enterpriseConnections).set(set).where(eq(enterpriseConnections.id, connectionId));
}

/** An email domain the organization claims, verified (by an operator) or not. */
export async function addDomain(h: Harness, workspaceId: string, input: { organization: string; domain: string; verified: boolean }): Promise<void> {
  const now = h.clock.now();
  await h.service.db.insert(organizationDomains).values({
    id: newId(),
    workspaceId,
    organizationId: await organizationIdOf(h, workspaceId, input.organization),
    domain: input.domain,
    verificationToken: `latchkey-verification=${newId()}`,
    verifiedAt: input.verified ? now : null,
    verificationMethod: input.verified ? "operator" : null,
    createdAt: now,
  });
}

export interface SocialProviderInput {
  key: string;
  preset: SocialPreset;
  name: string;
  clientId: string;
  clientSecret: string;
  /** social_providers.config: endpoints pointing at the stand-ins, the issuer. */
  config: Record<string, unknown>;
  /** client_ids of the applications that offer it. */
  applications: string[];
  enabled?: boolean;
}

/** A social provider, offered by the given applications; returns its id. */
export async function addSocialProvider(h: Harness, workspaceId: string, input: SocialProviderInput): Promise<string> {
  const id = newId();
  const now = h.clock.now();
  await h.service.db.insert(socialProviders).values({
    id,
    workspaceId,
    key: input.key,
    preset: input.preset,
    name: input.name,
    enabled: input.enabled ?? true,
    clientId: input.clientId,
    secretEncrypted: encryptSecret(h.service.config.masterKey, input.clientSecret, socialSecretPurpose(id)),
    config: input.config,
    createdAt: now,
    updatedAt: now,
  });
  const offered = await h.service.db.select({ id: clients.id }).from(clients).where(and(eq(clients.workspaceId, workspaceId), inArray(clients.clientId, input.applications)));
  if (offered.length !== input.applications.length) throw new Error(`unknown application in ${input.applications.join(", ")}`);
  if (offered.length) await h.service.db.insert(clientSocialProviders).values(offered.map((c) => ({ workspaceId, clientPk: c.id, providerId: id })));
  return id;
}

/** The application's own policy (clients.auth_policy), e.g. `{ mfa: "required" }`. */
export async function setApplicationPolicy(h: Harness, workspaceId: string, clientId: string, policy: Record<string, unknown>): Promise<void> {
  await h.service.db.update(clients).set({ authPolicy: policy }).where(and(eq(clients.workspaceId, workspaceId), eq(clients.clientId, clientId)));
  h.service.cache.clear();
}

/** Where a sign-in step sent the browser upstream: the 303's absolute Location, which must leave the downstream workspace. */
export function upstreamLocation(res: Response, downstreamWorkspaceId: string): URL {
  if (res.status !== 303) throw new Error(`expected a redirect upstream, got ${res.status}`);
  const url = new URL(res.headers.get("location")!, PUBLIC_URL);
  if (url.origin === PUBLIC_URL && url.pathname.startsWith(`/t/${downstreamWorkspaceId}/`)) throw new Error(`stayed at the downstream: ${url.href}`);
  return url;
}

/** "Sign in with <provider>" on the first step. */
export function startSocial(h: Harness, s: PendingSignIn, key: string): Promise<Response> {
  return postStep(h, s, "/sign-in/federation", { provider: key });
}

/** The browser arriving back at `<issuer>/federation/callback` with what the upstream sent (GET; the browser's cookies unless `cookie` is given). */
export async function deliverCallback(h: Harness, s: PendingSignIn, url: URL, options: { cookie?: string } = {}): Promise<Response> {
  const res = await call(h, url.pathname + url.search, { cookie: options.cookie ?? s.jar.header() });
  if (options.cookie === undefined) s.jar.take(res);
  return res;
}

/** The hosted error page of `code`: its status, its title and message, and no redirect or cookie. */
export async function expectHostedError(res: Response, code: HostedErrorCode): Promise<void> {
  const entry = { status: HOSTED_ERRORS[code].status, ...(hostedErrorText as (c: HostedErrorCode) => { title: string; message: string })(code) };
  const body = await res.text();
  expect({ status: res.status, title: body.includes(`<h1>${escapeHtml(entry.title)}</h1>`) }, body.slice(0, 800)).toEqual({ status: entry.status, title: true });
  // A message with the request's parameters ({name}) is checked by the tests that know them.
  if (!/\{\w+\}/.test(entry.message)) expect(body).toContain(escapeHtml(entry.message));
  expect(res.headers.get("location")).toBeNull();
  expect(res.headers.getSetCookie().filter((c) => c.startsWith("lk_session="))).toEqual([]);
}

export interface FederationCounts {
  users: number;
  identities: number;
  sessions: number;
  memberships: number;
  codes: number;
}

/** What a sign-in may have created in the workspace: compared before and after a refused one. */
export async function countsOf(h: Harness, workspaceId: string): Promise<FederationCounts> {
  const db = h.service.db;
  const [u, i, s, m, c] = await Promise.all([
    db.select({ id: users.id }).from(users).where(eq(users.workspaceId, workspaceId)),
    db.select({ id: federatedIdentities.id }).from(federatedIdentities).where(eq(federatedIdentities.workspaceId, workspaceId)),
    db.select({ id: hostedSessions.id }).from(hostedSessions).where(eq(hostedSessions.workspaceId, workspaceId)),
    db.select({ id: organizationMembers.id }).from(organizationMembers).where(eq(organizationMembers.workspaceId, workspaceId)),
    db.select({ id: authorizationCodes.codeHash }).from(authorizationCodes).where(eq(authorizationCodes.workspaceId, workspaceId)),
  ]);
  return { users: u.length, identities: i.length, sessions: s.length, memberships: m.length, codes: c.length };
}

/** The user with this address, if any. */
export async function userByEmail(h: Harness, workspaceId: string, email: string) {
  const [row] = await h.service.db.select().from(users).where(and(eq(users.workspaceId, workspaceId), eq(users.emailNormalized, email.toLowerCase())));
  return row ?? null;
}

export async function identitiesOf(h: Harness, workspaceId: string, userId: string) {
  return h.service.db.select().from(federatedIdentities).where(and(eq(federatedIdentities.workspaceId, workspaceId), eq(federatedIdentities.userId, userId)));
}
