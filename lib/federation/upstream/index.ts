/**
 * The upstream round trip (contract.ts): `beginUpstream` makes the authorization URL (OAuth: a
 * fresh state, nonce and PKCE verifier; SAML: the AuthnRequest with a RelayState and request ID);
 * `completeUpstream` verifies an OAuth callback and `completeSamlUpstream` a SAML response
 * (./saml.ts), each returning the upstream identity or throwing a FederationError (never anything else).
 */
import { FederationError, type UpstreamCall, type UpstreamIdentity, type UpstreamProvider, type UpstreamStart } from "./contract";
import { beginGithub, completeGithub } from "./github";
import type { CallbackInput } from "./identity";
import { beginOidc, completeOidc } from "./oidc";
import { beginSaml } from "./saml";

export { completeSaml as completeSamlUpstream, SAML_ACS_BODY_LIMIT, type SamlAssertionResult } from "./saml";

export { identityIssuerOf, presetProvider, upstreamFromConnectionRow, upstreamFromSocialRow } from "./presets";

export async function beginUpstream(provider: UpstreamProvider, call: UpstreamCall): Promise<UpstreamStart> {
  if (provider.protocol === "saml") return beginSaml(provider, call);
  return provider.protocol === "github" ? beginGithub(provider, call) : beginOidc(provider, call);
}

export interface UpstreamCallback {
  /** The callback URL as received (the GET query carries the response). */
  url: URL;
  /** The form body, for response_mode=form_post. */
  body?: URLSearchParams;
  /** What `beginUpstream` returned, kept for the callback. */
  expected: { state: string; nonce: string | null; codeVerifier: string | null };
}

/** The response parameters the protocol reads; anything else (Apple's `user`) stays out of it. */
const RESPONSE_PARAMETERS = ["code", "state", "iss", "error", "error_description", "error_uri", "session_state", "id_token", "token", "response"];

/** Apple's `user` form field: `{"name":{"firstName","lastName"},"email"}` on the first sign-in only. */
function appleName(body: URLSearchParams | undefined): string | null {
  const raw = body?.get("user");
  if (!raw || raw.length > 4096) return null;
  try {
    const name = (JSON.parse(raw) as { name?: { firstName?: unknown; lastName?: unknown } }).name;
    const parts = [name?.firstName, name?.lastName].filter((p): p is string => typeof p === "string" && p.trim() !== "");
    return parts.length ? parts.join(" ") : null;
  } catch {
    return null;
  }
}

/**
 * The response as received, placed on the registered redirect URI (the token request must
 * repeat it exactly, whatever host or proxy the callback reached us through).
 */
function responseUrl(call: UpstreamCall, callback: UpstreamCallback): URL {
  const url = new URL(call.redirectUri);
  const received = callback.body ?? callback.url.searchParams;
  for (const [name, value] of received) if (RESPONSE_PARAMETERS.includes(name)) url.searchParams.append(name, value);
  return url;
}

export async function completeUpstream(provider: UpstreamProvider, call: UpstreamCall, callback: UpstreamCallback): Promise<UpstreamIdentity> {
  if (provider.protocol === "saml") throw new FederationError("invalid_response", "A SAML connection answers at its ACS, not the OAuth callback");
  let input: CallbackInput;
  try {
    input = { response: responseUrl(call, callback), expected: callback.expected, appleName: provider.apple ? appleName(callback.body) : null };
  } catch (cause) {
    throw new FederationError("misconfigured", "The redirect URI is not a URL", { cause });
  }
  return provider.protocol === "github" ? completeGithub(provider, call, input) : completeOidc(provider, call, input);
}
