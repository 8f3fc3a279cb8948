/**
 * The social presets and the enterprise connection, as UpstreamProviders built from their rows.
 *
 * Settings live in the rows' `config` jsonb, snake_case like the workspace file:
 * - social_providers.config: `issuer`, `tenant` (Microsoft), `team_id` and `key_id` (Apple),
 *   `authorization_endpoint`, `token_endpoint`, `userinfo_endpoint`, `jwks_uri`, `api_base`
 *   (GitHub), `scopes` (added to the preset's). Every endpoint can be overridden, so private
 *   deployments and tests can point a preset elsewhere.
 * - enterprise_connections.config (kind `oidc`): `issuer`, `client_id`, the same endpoint
 *   overrides and `scopes`.
 * A setting that cannot work is a FederationError `misconfigured`, raised when the row is read.
 */
import { z } from "zod";
import type { SocialPreset } from "../../../db/schema";
import { FederationError, type UpstreamProvider } from "./contract";
import { upstreamUrl } from "./transport";
import { samlConfigSchema } from "./saml-settings";

const url = z.string().trim().min(1).max(2000);
const scopeToken = z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "a scope is printable ASCII without spaces, quotes or backslashes");

const endpointOverrides = {
  authorization_endpoint: url.optional(),
  token_endpoint: url.optional(),
  userinfo_endpoint: url.optional(),
  jwks_uri: url.optional(),
  scopes: z.array(scopeToken).max(20).optional(),
};

/** social_providers.config (unknown keys are ignored). */
export const socialProviderConfigSchema = z.object({
  issuer: url.optional(),
  /**
   * Microsoft Entra ID tenant: its GUID or one of its verified domain names. "common",
   * "organizations" and "consumers" are refused: their ID tokens carry the issuer of whichever
   * tenant the user belongs to, so no fixed issuer could be checked and identities of different
   * tenants would share one provider.
   */
  tenant: z.string().trim().optional(),
  team_id: z.string().trim().optional(),
  key_id: z.string().trim().optional(),
  api_base: url.optional(),
  ...endpointOverrides,
});
export type SocialProviderConfig = z.infer<typeof socialProviderConfigSchema>;

/** enterprise_connections.config for an OIDC connection (unknown keys, such as old `domains`, are ignored). */
export const connectionConfigSchema = z.object({
  issuer: url,
  client_id: z.string().trim().min(1).max(500),
  ...endpointOverrides,
});

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DOMAIN = /^(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;
/** Apple team and key ids (ten upper-case letters and digits at Apple; the console accepts up to 20 alphanumerics). */
const APPLE_ID = /^[A-Za-z0-9]{1,20}$/;

export const GOOGLE_ISSUER = "https://accounts.google.com";
export const APPLE_ISSUER = "https://appleid.apple.com";
export const GITHUB_ISSUER = "https://github.com";
export const GITHUB_AUTHORIZATION_ENDPOINT = "https://github.com/login/oauth/authorize";
export const GITHUB_TOKEN_ENDPOINT = "https://github.com/login/oauth/access_token";
export const GITHUB_API_BASE = "https://api.github.com";

export const microsoftIssuer = (tenant: string) => `https://login.microsoftonline.com/${tenant}/v2.0`;

/**
 * Why a Microsoft tenant setting cannot work (null when it can), for the console and the
 * workspace file to say before sign-in does. The multi-tenant aliases are refused: see
 * `socialProviderConfigSchema.tenant`.
 */
export function microsoftTenantProblem(tenant: string): string | null {
  if (["common", "organizations", "consumers"].includes(tenant.toLowerCase())) {
    return `must be one tenant (its id or a verified domain): "${tenant}" signs in users of any tenant, whose ID tokens each carry their own issuer`;
  }
  if (!GUID.test(tenant) && !DOMAIN.test(tenant)) return "must be the tenant's id (a GUID) or one of its verified domains";
  return null;
}

const PRESET_SCOPES: Record<SocialPreset, string[]> = {
  google: ["email", "profile"],
  microsoft: ["email", "profile"],
  // Apple answers with the name only once, in the form-posted callback (see index.ts).
  apple: ["name", "email"],
  github: ["read:user", "user:email"],
  oidc: ["email", "profile"],
};

type Source = UpstreamProvider["source"];

function misconfigured(message: string): never {
  throw new FederationError("misconfigured", message);
}

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new FederationError("misconfigured", `The ${what} settings are invalid: ${issue?.path.join(".") || "config"}: ${issue?.message ?? "invalid"}`, { cause: result.error });
}

function scopesOf(preset: string[], extra: string[] | undefined): string[] {
  return [...new Set([...preset, ...(extra ?? [])].filter((s) => s !== "openid"))];
}

/** The explicit endpoints, each checked against the URL policy. */
function endpointsOf(config: { authorization_endpoint?: string; token_endpoint?: string; userinfo_endpoint?: string; jwks_uri?: string; api_base?: string }): UpstreamProvider["endpoints"] {
  const endpoints: UpstreamProvider["endpoints"] = {};
  if (config.authorization_endpoint) endpoints.authorization = upstreamUrl(config.authorization_endpoint, "authorization endpoint").href;
  if (config.token_endpoint) endpoints.token = upstreamUrl(config.token_endpoint, "token endpoint").href;
  if (config.userinfo_endpoint) endpoints.userinfo = upstreamUrl(config.userinfo_endpoint, "UserInfo endpoint").href;
  if (config.jwks_uri) endpoints.jwks = upstreamUrl(config.jwks_uri, "JWKS URI").href;
  if (config.api_base) endpoints.api = upstreamUrl(config.api_base, "API base").href;
  return endpoints;
}

/** An issuer exactly as configured (it is compared with `iss` as a string), checked against the URL policy. */
function issuerOf(value: string): string {
  upstreamUrl(value, "issuer");
  return value;
}

export interface PresetSettings {
  source: Source;
  clientId: string;
  /** Decrypted; for Apple the PEM private key. */
  clientSecret: string | null;
  config: SocialProviderConfig;
}

/** A social preset's defaults, with the configured overrides applied. */
export function presetProvider(preset: SocialPreset, settings: PresetSettings): UpstreamProvider {
  const { config } = settings;
  const clientId = settings.clientId.trim();
  if (!clientId) misconfigured("The client id is missing");
  if (!settings.clientSecret) misconfigured(preset === "apple" ? "The Apple private key is missing" : "The client secret is missing");
  const base = { source: settings.source, clientId, clientSecret: settings.clientSecret, endpoints: endpointsOf(config), scopes: scopesOf(PRESET_SCOPES[preset], config.scopes) };
  switch (preset) {
    case "google":
      return { ...base, protocol: "oidc", issuer: issuerOf(config.issuer ?? GOOGLE_ISSUER) };
    case "microsoft": {
      const tenant = config.tenant;
      const problem = tenant === undefined ? null : microsoftTenantProblem(tenant);
      if (problem) misconfigured(`The Microsoft tenant ${problem}`);
      // An explicit issuer (a private cloud, tests) stands in for the tenant's.
      if (!config.issuer && !tenant) misconfigured("The Microsoft tenant is missing");
      return { ...base, protocol: "oidc", issuer: issuerOf(config.issuer ?? microsoftIssuer(tenant!)) };
    }
    case "apple": {
      if (!config.team_id || !APPLE_ID.test(config.team_id)) misconfigured("The Apple team id is missing or not letters and digits");
      if (!config.key_id || !APPLE_ID.test(config.key_id)) misconfigured("The Apple key id is missing or not letters and digits");
      return { ...base, protocol: "oidc", issuer: issuerOf(config.issuer ?? APPLE_ISSUER), apple: { teamId: config.team_id, keyId: config.key_id } };
    }
    case "github":
      return {
        ...base,
        protocol: "github",
        issuer: issuerOf(config.issuer ?? GITHUB_ISSUER),
        endpoints: {
          authorization: base.endpoints.authorization ?? GITHUB_AUTHORIZATION_ENDPOINT,
          token: base.endpoints.token ?? GITHUB_TOKEN_ENDPOINT,
          api: base.endpoints.api ?? GITHUB_API_BASE,
        },
      };
    case "oidc":
      if (!config.issuer) misconfigured("The issuer is missing");
      return { ...base, protocol: "oidc", issuer: issuerOf(config.issuer) };
    default:
      return misconfigured(`Unknown preset ${String(preset)}`);
  }
}

/** A workspace's social provider row (db/schema/federation.ts) with its decrypted secret. */
export function upstreamFromSocialRow(
  row: { id: string; preset: SocialPreset; clientId: string; config: Record<string, unknown> | null },
  decryptedSecret: string | null,
): UpstreamProvider {
  const config = parse(socialProviderConfigSchema, row.config, "social provider");
  return presetProvider(row.preset, { source: { kind: "social", providerId: row.id, preset: row.preset }, clientId: row.clientId, clientSecret: decryptedSecret, config });
}

/** An organization's enterprise connection row (db/schema/organizations.ts) with its decrypted secret. */
/**
 * The issuer a connection's identities are recorded under (federated_identities.issuer): the
 * SAML identity provider's entity ID, or the OIDC issuer as its ID tokens name it.
 */
export function identityIssuerOf(row: { kind: "oidc" | "saml"; config: Record<string, unknown> | null }): string {
  if (row.kind === "saml") return parse(samlConfigSchema, row.config, "SAML connection").idp_entity_id;
  return issuerOf(parse(connectionConfigSchema, row.config, "connection").issuer);
}

export function upstreamFromConnectionRow(
  row: { id: string; organizationId: string; kind: "oidc" | "saml"; config: Record<string, unknown> | null },
  decryptedSecret: string | null,
): UpstreamProvider {
  if (row.kind === "saml") {
    const saml = parse(samlConfigSchema, row.config, "SAML connection");
    if (!decryptedSecret) misconfigured("The SAML connection's SP key is missing");
    return {
      source: { kind: "connection", connectionId: row.id, organizationId: row.organizationId },
      protocol: "saml",
      issuer: identityIssuerOf(row),
      clientId: "",
      clientSecret: null,
      endpoints: {},
      scopes: [],
      saml: { connectionId: row.id, config: saml, spPrivateKey: decryptedSecret },
    };
  }
  const config = parse(connectionConfigSchema, row.config, "connection");
  if (!decryptedSecret) misconfigured("The connection's client secret is missing");
  return {
    source: { kind: "connection", connectionId: row.id, organizationId: row.organizationId },
    protocol: "oidc",
    issuer: identityIssuerOf(row),
    clientId: config.client_id,
    clientSecret: decryptedSecret,
    endpoints: endpointsOf(config),
    scopes: scopesOf(PRESET_SCOPES.oidc, config.scopes),
  };
}
