// The `social_providers` section (array order is the button order), the upstream URL rule it shares with enterprise connections, and secret references.
import { z } from "zod";
import { SOCIAL_PRESETS } from "../../../db/schema/federation";
import { microsoftTenantProblem } from "../../federation/upstream/presets";
import { isLoopbackHost } from "../../uris";
import { asString, entries, isRecord, type CrossCheck } from "../../surfaces/workspace-file/checks";
import { displayName } from "./fields";
import type { PathSegment } from "../../surfaces/workspace-file/paths";

/**
 * An upstream issuer or endpoint: absolute https (http only on a loopback host, for local
 * identity providers), no credentials, no fragment. Null when acceptable.
 */
export function upstreamUrlProblem(value: string): string | null {
  if (value.length > 2000) return "must be at most 2000 characters";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute https URL";
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) {
    return "must use https (http is allowed only for localhost, 127.0.0.1 and [::1])";
  }
  if (url.username || url.password) return "must not contain user credentials";
  if (value.includes("#")) return "must not contain a fragment (#)";
  return null;
}

export const upstreamUrl = z.string().superRefine((value, ctx) => {
  const problem = upstreamUrlProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

/** A secret is never written in the file: it names the environment variable import reads it from. */
export const secretReference = z.strictObject({
  env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "must be an environment variable name (letters, digits and _)"),
});
export type SecretReference = z.output<typeof secretReference>;

export const providerKey = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "must be 1–63 characters of a–z, 0–9 and -, starting with a letter or digit");

const shortText = z.string().trim().min(1, "must not be blank").max(200, "must be at most 200 characters");

export const socialProviderSchema = z.strictObject({
  key: providerKey,
  preset: z.enum(SOCIAL_PRESETS),
  /** The button's label. */
  name: displayName,
  client_id: shortText,
  /** For apple: the private key (PEM) that signs the client secret JWT. */
  client_secret: secretReference.optional(),
  /** microsoft: the directory (tenant) id or one of its verified domains (one tenant: its issuer is checked exactly). */
  tenant: z.string().max(253, "must be at most 253 characters").optional(),
  /** apple: the team id and the key id of the private key. */
  team_id: z.string().regex(/^[A-Za-z0-9]{1,20}$/, "must be letters and digits").optional(),
  key_id: z.string().regex(/^[A-Za-z0-9]{1,20}$/, "must be letters and digits").optional(),
  issuer: upstreamUrl.optional(),
  authorization_endpoint: upstreamUrl.optional(),
  token_endpoint: upstreamUrl.optional(),
  userinfo_endpoint: upstreamUrl.optional(),
  /** github: the REST API base (GitHub Enterprise Server). */
  api_base: upstreamUrl.optional(),
  enabled: z.boolean().default(true),
});

export type SocialProviderEntry = z.output<typeof socialProviderSchema>;

/** Which optional settings a preset takes; anything else is refused rather than silently ignored. */
export const PRESET_FIELDS: Record<(typeof SOCIAL_PRESETS)[number], readonly string[]> = {
  google: ["issuer", "authorization_endpoint", "token_endpoint", "userinfo_endpoint"],
  microsoft: ["tenant", "issuer", "authorization_endpoint", "token_endpoint", "userinfo_endpoint"],
  apple: ["team_id", "key_id", "issuer", "authorization_endpoint", "token_endpoint"],
  // GitHub's issuer is only the name its identities are recorded under (GitHub Enterprise Server: its own).
  github: ["issuer", "authorization_endpoint", "token_endpoint", "api_base"],
  oidc: ["issuer", "authorization_endpoint", "token_endpoint", "userinfo_endpoint"],
};

export const OPTIONAL_PROVIDER_FIELDS = ["tenant", "team_id", "key_id", "issuer", "authorization_endpoint", "token_endpoint", "userinfo_endpoint", "api_base"] as const;

/**
 * The rules across fields of one provider (shared with the console): what each preset requires
 * and accepts. Returns [field, message] pairs.
 */
export function presetProblems(provider: Record<string, unknown>): Array<[string, string]> {
  const preset = SOCIAL_PRESETS.find((p) => p === provider.preset);
  if (!preset) return [];
  const out: Array<[string, string]> = [];
  const allowed = PRESET_FIELDS[preset];
  for (const field of OPTIONAL_PROVIDER_FIELDS) {
    if (provider[field] !== undefined && !allowed.includes(field)) out.push([field, `does not apply to the ${preset} preset`]);
  }
  if (preset === "oidc" && provider.issuer === undefined) out.push(["issuer", "is required for a generic OpenID Connect provider"]);
  if (preset === "microsoft") {
    if (typeof provider.tenant === "string") {
      const problem = microsoftTenantProblem(provider.tenant);
      if (problem) out.push(["tenant", problem]);
    } else if (provider.issuer === undefined) out.push(["tenant", "is required for Microsoft (or an explicit issuer)"]);
  }
  if (preset === "apple") {
    if (provider.team_id === undefined) out.push(["team_id", "is required for Apple"]);
    if (provider.key_id === undefined) out.push(["key_id", "is required for Apple"]);
  }
  return out;
}

/** Keys are unique; each preset's required settings are there. Returns the provider keys. */
export function checkSocialProviders(c: CrossCheck): Set<string> {
  const keys = c.index("social_providers", "key");
  for (const [i, provider] of entries(c.doc, "social_providers")) {
    for (const [field, message] of presetProblems(provider)) c.add(["social_providers", i, field], message);
  }
  return new Set(keys.keys());
}

/** Every `{ "env": NAME }` in the raw document, with its JSON path, for import to resolve. */
export function secretReferences(doc: Record<string, unknown>): Array<{ path: PathSegment[]; env: string }> {
  const out: Array<{ path: PathSegment[]; env: string }> = [];
  const take = (value: unknown, path: PathSegment[]) => {
    if (isRecord(value)) {
      const env = asString(value.env);
      if (env !== undefined) out.push({ path: [...path, "env"], env });
    }
  };
  for (const [i, provider] of entries(doc, "social_providers")) take(provider.client_secret, ["social_providers", i, "client_secret"]);
  for (const [i, org] of entries(doc, "organizations")) {
    for (const [k, connection] of entries(org, "connections")) take(connection.client_secret, ["organizations", i, "connections", k, "client_secret"]);
  }
  return out;
}
