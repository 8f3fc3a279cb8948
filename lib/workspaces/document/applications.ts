// The `applications` section: the client schema, default identity scopes, and the rules per client type.
import { z } from "zod";
import { clientTypes, type ClientType } from "../../../db/schema/applications";
import { homeUriProblem, redirectUriProblem } from "../../uris";
import { authPolicySchema } from "./auth-policy";
import { asArray, entries, type CrossCheck } from "../../surfaces/workspace-file/checks";
import { clientId, displayName, IDENTITY_SCOPES, origin, uriList } from "./fields";
import type { PathSegment } from "../../surfaces/workspace-file/paths";
import { checkSocialProviders, providerKey } from "./social-providers";
import { APPLICATION_OPTIONS } from "../../features/registry";

/**
 * The features' application options (lib/surfaces/application-options.ts), each an optional boolean
 * key of the entry. Typed away from the entry's static shape (the keys come from the registry):
 * read them with `applicationOptionsOf`.
 */
const optionShape = Object.fromEntries(APPLICATION_OPTIONS.map((o) => [o.key, z.boolean().optional()])) as {};

/** The options an application entry switches on, as `clients.options` stores them (only the ones on). */
export function applicationOptionsOf(app: object): Record<string, boolean> {
  const entry = app as Record<string, unknown>;
  return Object.fromEntries(APPLICATION_OPTIONS.filter((o) => entry[o.key] === true).map((o) => [o.key, true]));
}

export const MIN_PRESET_SECRET_LENGTH = 32;

export const applicationSchema = z.strictObject({
  client_id: clientId,
  name: displayName,
  type: z.enum(clientTypes),
  redirect_uris: uriList.default([]),
  post_logout_redirect_uris: uriList.default([]),
  /** The application's home page (optional): the account-security portal's way back after the direct link. */
  home_uri: z.string().optional(),
  allowed_origins: z.array(origin).max(100, "must have at most 100 origins").default([]),
  /** Defaults to ["openid"] for interactive clients and [] for M2M. */
  identity_scopes: z.array(z.enum(IDENTITY_SCOPES)).optional(),
  active: z.boolean().default(true),
  account_security: z.boolean().default(false),
  /** Overrides of the workspace's authentication policy, field by field (the rest is inherited). */
  auth_policy: authPolicySchema.optional(),
  /** A preset secret for development fixtures; never exported. */
  secret: z
    .string()
    .min(MIN_PRESET_SECRET_LENGTH, `must be at least ${MIN_PRESET_SECRET_LENGTH} characters`)
    .max(512, "must be at most 512 characters")
    .optional(),
  secret_lifetime_days: z
    .number()
    .int("must be a whole number of days")
    .min(1, "must be from 1 to 365 days")
    .max(365, "must be from 1 to 365 days")
    .optional(),
  /**
   * Keys of the social providers (social_providers) the sign-in page offers; their order there is
   * the button order. Absent leaves the application's choice as it is; a list replaces it.
   */
  social_providers: z.array(providerKey).max(50, "must have at most 50 providers").optional(),
  ...optionShape,
});


export function defaultIdentityScopes(type: ClientType): string[] {
  return type === "M2M" ? [] : ["openid"];
}

/** Type-specific client rules and URI rules; returns the applications by client_id. */
export function checkApplications(c: CrossCheck): Map<string, Record<string, unknown>> {
  const { add, uniqueStrings } = c;
  const apps = c.index("applications", "client_id");
  // Providers are checked here, where they are referred to.
  const providers = checkSocialProviders(c);
  for (const [i, app] of entries(c.doc, "applications")) {
    const at = (...rest: PathSegment[]) => ["applications", i, ...rest];
    const type = clientTypes.find((t) => t === app.type);
    const interactive = type === "PUBLIC" || type === "WEB_CONFIDENTIAL";
    for (const field of ["redirect_uris", "post_logout_redirect_uris"] as const) {
      const list = app[field];
      if (type === "M2M") {
        if (asArray(list).length > 0) {
          add(at(field), "M2M clients cannot have redirect URIs (they do not use the authorize endpoint or logout)");
        }
        continue;
      }
      asArray(list).forEach((uri, k) => {
        if (typeof uri !== "string") return;
        const problem = redirectUriProblem(uri, type === undefined || type === "PUBLIC");
        if (problem) add(at(field, k), problem);
      });
      uniqueStrings(list, at(field), "URI");
    }
    if (typeof app.home_uri === "string") {
      const firstRedirect = asArray(app.redirect_uris)[0];
      const problem = homeUriProblem(app.home_uri, type ?? "PUBLIC", typeof firstRedirect === "string" ? firstRedirect : undefined);
      if (problem) add(at("home_uri"), problem);
    }
    if (type && type !== "PUBLIC" && asArray(app.allowed_origins).length > 0) {
      add(at("allowed_origins"), "only PUBLIC clients have allowed browser origins (confidential clients never call from a browser)");
    }
    uniqueStrings(app.allowed_origins, at("allowed_origins"), "origin");
    const scopes = app.identity_scopes;
    if (Array.isArray(scopes)) {
      if (type === "M2M" && scopes.length > 0) add(at("identity_scopes"), "M2M clients have no identity scopes; it must be empty");
      if (interactive && !scopes.includes("openid")) add(at("identity_scopes"), 'must include "openid" for interactive clients');
      uniqueStrings(scopes, at("identity_scopes"), "scope");
    }
    if (type === "M2M" && app.account_security === true) {
      add(at("account_security"), "M2M clients cannot offer the account-security portal");
    }
    asArray(app.social_providers).forEach((key, k) => {
      if (typeof key === "string" && !providers.has(key)) add(at("social_providers", k), `unknown social provider ${JSON.stringify(key)} (not in social_providers)`);
    });
    uniqueStrings(app.social_providers, at("social_providers"), "social provider");
    if (type === "M2M" && asArray(app.social_providers).length > 0) add(at("social_providers"), "M2M clients have no sign-in page; it must be empty");
    for (const option of APPLICATION_OPTIONS) {
      if (app[option.key] === true && type && !option.types.includes(type)) add(at(option.key), `only ${option.types.join(" and ")} clients can switch on ${option.key}`);
    }
    if (type === "PUBLIC") {
      if (app.secret !== undefined) add(at("secret"), "PUBLIC clients have no secret");
      if (app.secret_lifetime_days !== undefined) add(at("secret_lifetime_days"), "PUBLIC clients have no secret");
    }
  }
  return apps;
}
