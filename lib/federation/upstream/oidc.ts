/**
 * OpenID Connect upstreams (enterprise connections, Google, Microsoft, Apple, the generic
 * provider) through openid-client: discovery, the authorization URL, the code grant with state,
 * nonce and PKCE checked, the ID token's signature verified, and UserInfo when the ID token
 * carries no email.
 */
import * as client from "openid-client";
import { sha256Hex } from "../../crypto";
import { appleClientSecret } from "./apple";
import { FederationError, type UpstreamCall, type UpstreamIdentity, type UpstreamProvider, type UpstreamStart } from "./contract";
import { guardedFetch, isLoopbackHttp, toFederationError, UPSTREAM_TIMEOUT_MS, upstreamUrl } from "./transport";
import { identityClaims, receivedOf, type CallbackInput } from "./identity";

/** Discovered metadata is reused this long; a failed discovery is never kept. */
const DISCOVERY_TTL_MS = 10 * 60 * 1000;

interface Discovered {
  metadata: client.ServerMetadata;
  jwks?: ReturnType<typeof client.getJwksCache>;
  expiresAt: number;
}

/** Keyed by issuer, client id and a hash of the secret, so a changed setting never meets an old entry. */
const discoveries = new Map<string, Discovered>();

/** Drops every cached discovery (tests that restart an upstream on the same address). */
export function forgetDiscoveries(): void {
  discoveries.clear();
}

const ENDPOINTS = ["authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri"] as const;

async function discover(provider: UpstreamProvider, call: UpstreamCall, issuer: URL): Promise<Discovered> {
  // Real time, not the service clock: this is about the cache's freshness, not a protocol check.
  const key = `${provider.issuer}\n${provider.clientId}\n${sha256Hex(provider.clientSecret ?? "")}`;
  const cached = discoveries.get(key);
  if (cached && cached.expiresAt > Date.now()) return cached;
  discoveries.delete(key);
  let found: client.Configuration;
  try {
    found = await client.discovery(issuer, provider.clientId, undefined, undefined, {
      [client.customFetch]: guardedFetch(call),
      timeout: UPSTREAM_TIMEOUT_MS / 1000,
      execute: isLoopbackHttp(issuer) ? [client.allowInsecureRequests] : [],
    });
  } catch (error) {
    const mapped = toFederationError(error, `Discovery at ${provider.issuer}`);
    // Anything but an unreachable upstream means the issuer setting cannot work as written.
    throw mapped.code === "upstream_unavailable" ? mapped : new FederationError("misconfigured", mapped.message, { cause: error });
  }
  const metadata = found.serverMetadata();
  for (const name of ENDPOINTS) {
    const value = metadata[name];
    if (typeof value === "string") upstreamUrl(value, `discovered ${name}`);
  }
  const entry: Discovered = { metadata, expiresAt: Date.now() + DISCOVERY_TTL_MS };
  discoveries.set(key, entry);
  return entry;
}

/** Which client authentication the token endpoint gets: Apple's JWT, else Basic unless only post is offered. */
async function clientAuth(provider: UpstreamProvider, metadata: client.ServerMetadata, call: UpstreamCall): Promise<client.ClientAuth> {
  if (provider.apple) return client.ClientSecretPost(await appleClientSecret(provider, call.now));
  if (!provider.clientSecret) throw new FederationError("misconfigured", "The client secret is missing");
  const methods = metadata.token_endpoint_auth_methods_supported;
  if (Array.isArray(methods) && !methods.includes("client_secret_basic") && methods.includes("client_secret_post")) return client.ClientSecretPost(provider.clientSecret);
  return client.ClientSecretBasic(provider.clientSecret);
}

/**
 * A Configuration for one call: the cached metadata with the configured endpoint overrides, the
 * service clock (as openid-client's skew from real time; the fixed test clocks are far from it),
 * the guarded fetch, and ID token signatures checked (openid-client skips them by default for
 * token endpoint responses).
 */
async function configure(provider: UpstreamProvider, call: UpstreamCall, forToken: boolean): Promise<{ config: client.Configuration; discovered: Discovered }> {
  const issuer = upstreamUrl(provider.issuer, "issuer");
  const discovered = await discover(provider, call, issuer);
  const metadata: client.ServerMetadata = {
    ...discovered.metadata,
    ...(provider.endpoints.authorization ? { authorization_endpoint: provider.endpoints.authorization } : {}),
    ...(provider.endpoints.token ? { token_endpoint: provider.endpoints.token } : {}),
    ...(provider.endpoints.userinfo ? { userinfo_endpoint: provider.endpoints.userinfo } : {}),
    ...(provider.endpoints.jwks ? { jwks_uri: provider.endpoints.jwks } : {}),
  };
  const auth = forToken ? await clientAuth(provider, metadata, call) : client.None();
  const skew = Math.round((call.now.getTime() - Date.now()) / 1000);
  const config = new client.Configuration(metadata, provider.clientId, { [client.clockSkew]: skew }, auth);
  config[client.customFetch] = guardedFetch(call);
  config.timeout = UPSTREAM_TIMEOUT_MS / 1000;
  const urls = [issuer, ...ENDPOINTS.map((n) => metadata[n]).filter((v): v is string => typeof v === "string").map((v) => new URL(v))];
  if (urls.some(isLoopbackHttp)) client.allowInsecureRequests(config);
  client.enableNonRepudiationChecks(config);
  if (discovered.jwks) client.setJwksCache(config, discovered.jwks);
  return { config, discovered };
}

/** Apple posts the response back (and only then sends the user's name) when name or email is asked for. */
function wantsFormPost(provider: UpstreamProvider): boolean {
  return provider.source.kind === "social" && provider.source.preset === "apple" && provider.scopes.some((s) => s === "name" || s === "email");
}

export async function beginOidc(provider: UpstreamProvider, call: UpstreamCall): Promise<UpstreamStart> {
  try {
    const { config } = await configure(provider, call, false);
    const state = client.randomState();
    const nonce = client.randomNonce();
    const codeVerifier = client.randomPKCECodeVerifier();
    const parameters: Record<string, string> = {
      redirect_uri: call.redirectUri,
      response_type: "code",
      scope: ["openid", ...provider.scopes.filter((s) => s !== "openid")].join(" "),
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
    };
    if (wantsFormPost(provider)) parameters.response_mode = "form_post";
    return { url: client.buildAuthorizationUrl(config, parameters), state, nonce, codeVerifier, requestId: null };
  } catch (error) {
    throw toFederationError(error, `Sign-in start at ${provider.issuer}`);
  }
}

export async function completeOidc(provider: UpstreamProvider, call: UpstreamCall, callback: CallbackInput): Promise<UpstreamIdentity> {
  try {
    if (!callback.expected.nonce || !callback.expected.codeVerifier) throw new FederationError("invalid_response", "The round trip has no nonce or PKCE verifier");
    const { config, discovered } = await configure(provider, call, true);
    const tokens = await client.authorizationCodeGrant(config, callback.response, {
      pkceCodeVerifier: callback.expected.codeVerifier!,
      expectedState: callback.expected.state,
      expectedNonce: callback.expected.nonce!,
      idTokenExpected: true,
    });
    discovered.jwks = client.getJwksCache(config) ?? discovered.jwks;
    const claims = tokens.claims();
    if (!claims) throw new FederationError("invalid_response", "The upstream sent no ID token");
    let profile: Record<string, unknown> = claims;
    const received = receivedOf("ID token", Object.entries(claims));
    if (typeof claims.email !== "string" && config.serverMetadata().userinfo_endpoint) {
      // UserInfo about another subject than the ID token's is refused by openid-client.
      const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
      profile = { ...info, name: claims.name ?? info.name };
      received.push(...receivedOf("UserInfo", Object.entries(info)));
    }
    return {
      ...identityClaims({
        issuer: claims.iss,
        subject: claims.sub,
        profile,
        fallbackName: callback.appleName,
        amr: claims.amr,
        acr: claims.acr,
      }),
      received,
    };
  } catch (error) {
    throw toFederationError(error, `Sign-in at ${provider.issuer}`);
  }
}
