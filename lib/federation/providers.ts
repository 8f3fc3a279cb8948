/**
 * Which upstream providers a sign-in may use, loaded with their decrypted secrets: a workspace's
 * social providers that the application offers (enabled, in the administrator's order), and an
 * organization's enterprise connections (OIDC or SAML, enabled, organization active).
 */
import { and, asc, eq, sql } from "drizzle-orm";
import { reusable } from "../../db/reusable";
import { clientSocialProviders, enterpriseConnections, organizations, socialProviders } from "../../db/schema";
import { decryptSecret } from "../crypto";
import type { EndpointContext } from "../http/context";
import { connectionSecretPurpose, socialSecretPurpose } from "./secrets";
import type { UpstreamProvider } from "./upstream/contract";
import { upstreamFromConnectionRow, upstreamFromSocialRow } from "./upstream";

export interface SocialButton {
  key: string;
  name: string;
  preset: (typeof socialProviders.$inferSelect)["preset"];
}

/** The social providers the application offers, enabled, in button order. */
export async function socialButtonsFor(ctx: EndpointContext, clientPk: string): Promise<SocialButton[]> {
  return buttonsStatement(ctx.service.db, { workspaceId: ctx.workspace.id, clientPk });
}

/** Built once: every sign-in page asks it. */
const buttonsStatement = reusable("latchkey_social_buttons", (db) =>
  db
    .select({ key: socialProviders.key, name: socialProviders.name, preset: socialProviders.preset })
    .from(clientSocialProviders)
    .innerJoin(socialProviders, eq(socialProviders.id, clientSocialProviders.providerId))
    .where(and(eq(clientSocialProviders.workspaceId, sql.placeholder("workspaceId")), eq(clientSocialProviders.clientPk, sql.placeholder("clientPk")), eq(socialProviders.enabled, true)))
    .orderBy(asc(socialProviders.position), asc(socialProviders.name)),
);

/**
 * Who a connection admits on a first sign-in (lib/federation/identities.ts): `verified_domains`
 * (the default) only addresses in a domain its organization verified; `any_vouched` any address
 * its upstream vouches for (never one in another organization's verified domain).
 */
export type ConnectionAdmission = (typeof enterpriseConnections.$inferSelect)["admission"];
export const CONNECTION_ADMISSIONS: readonly ConnectionAdmission[] = ["verified_domains", "any_vouched"];

export interface LoadedProvider {
  provider: UpstreamProvider;
  /** The button label or connection name, for pages. */
  displayName: string;
  connection: { id: string; organizationId: string; defaultRoleIds: string[]; trustUpstreamMfa: boolean; admission: ConnectionAdmission } | null;
  socialProviderId: string | null;
}

const secretOf = (ctx: EndpointContext, sealed: string | null, purpose: string) => (sealed ? decryptSecret(ctx.service.config.masterKey, sealed, purpose) : null);

/** A social provider by key, only if enabled and offered by the application. */
export async function loadSocialProvider(ctx: EndpointContext, clientPk: string, key: string): Promise<LoadedProvider | null> {
  const [row] = await ctx.service.db
    .select({ provider: socialProviders })
    .from(clientSocialProviders)
    .innerJoin(socialProviders, eq(socialProviders.id, clientSocialProviders.providerId))
    .where(and(eq(clientSocialProviders.workspaceId, ctx.workspace.id), eq(clientSocialProviders.clientPk, clientPk), eq(socialProviders.key, key), eq(socialProviders.enabled, true)))
    .limit(1);
  if (!row) return null;
  const p = row.provider;
  return {
    provider: upstreamFromSocialRow(p, secretOf(ctx, p.secretEncrypted, socialSecretPurpose(p.id))),
    displayName: p.name,
    connection: null,
    socialProviderId: p.id,
  };
}

/**
 * An enterprise connection by id, only if it is an enabled connection of an active organization.
 * `disabledToo`: a disabled one as well, for an administrator's test of it (lib/federation/connection-test),
 * which signs no one in; a sign-in never asks for it.
 */
export async function loadConnection(ctx: EndpointContext, connectionId: string, options: { disabledToo?: boolean } = {}): Promise<LoadedProvider | null> {
  const c = enterpriseConnections;
  const [row] = await ctx.service.db
    .select({ connection: enterpriseConnections })
    .from(enterpriseConnections)
    .innerJoin(organizations, and(eq(organizations.id, enterpriseConnections.organizationId), eq(organizations.active, true)))
    .where(and(eq(c.workspaceId, ctx.workspace.id), eq(c.id, connectionId), options.disabledToo === true ? undefined : eq(c.active, true)))
    .limit(1);
  if (!row) return null;
  const r = row.connection;
  return {
    provider: upstreamFromConnectionRow(r, secretOf(ctx, r.secretEncrypted, connectionSecretPurpose(r.id))),
    displayName: r.name,
    connection: { id: r.id, organizationId: r.organizationId, defaultRoleIds: r.defaultRoleIds, trustUpstreamMfa: r.trustUpstreamMfa, admission: r.admission },
    socialProviderId: null,
  };
}

/** A social provider by id (a round trip's), only if still enabled and offered by the application. */
export async function loadSocialProviderById(ctx: EndpointContext, clientPk: string, providerId: string): Promise<LoadedProvider | null> {
  const [row] = await ctx.service.db
    .select({ key: socialProviders.key })
    .from(socialProviders)
    .where(and(eq(socialProviders.workspaceId, ctx.workspace.id), eq(socialProviders.id, providerId)))
    .limit(1);
  return row ? loadSocialProvider(ctx, clientPk, row.key) : null;
}
