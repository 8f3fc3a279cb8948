/**
 * The upstream side of federation, as the rest of lib/federation sees it: a provider described
 * by its settings (decrypted secret included), a round trip started (`beginUpstream`), and the
 * callback turned into a verified upstream identity (`completeUpstream`), or a FederationError.
 *
 * Three protocols: OpenID Connect (enterprise connections, the Google, Microsoft and Apple presets,
 * the generic provider) through openid-client, GitHub's OAuth 2.0 plus its user API, and SAML 2.0
 * (enterprise connections) through node-saml. A round trip always has a `state` (SAML's
 * RelayState); OAuth adds a nonce and a PKCE verifier, SAML the AuthnRequest's ID.
 */
import type { SocialPreset } from "../../../db/schema";
import type { SamlProviderSettings } from "./saml-settings";

export type UpstreamProtocol = "oidc" | "github" | "saml";

export interface UpstreamProvider {
  /** Where it is configured: an organization's enterprise connection or a workspace's social provider. */
  source: { kind: "connection"; connectionId: string; organizationId: string } | { kind: "social"; providerId: string; preset: SocialPreset };
  protocol: UpstreamProtocol;
  /**
   * OIDC: the upstream issuer (discovery at `<issuer>/.well-known/openid-configuration`, exact
   * `iss` checks). GitHub: the issuer recorded with its identities (`https://github.com` unless
   * configured otherwise), never sent anywhere.
   */
  issuer: string;
  clientId: string;
  /** Decrypted client secret; for Apple, the PEM private key that signs the client secret JWT. */
  clientSecret: string | null;
  /** Explicit endpoints: GitHub's (authorization, token, api base) and any OIDC override. */
  endpoints: { authorization?: string; token?: string; userinfo?: string; jwks?: string; api?: string };
  /** Scopes requested upstream (`openid` is added for OIDC). */
  scopes: string[];
  /** Apple's client secret JWT: team id and key id. */
  apple?: { teamId: string; keyId: string };
  /** SAML: the connection's settings and its decrypted SP private key. */
  saml?: SamlProviderSettings;
}

/** What the start of a round trip sends upstream and must keep for the callback. */
export interface UpstreamStart {
  url: URL;
  /** OAuth's `state`; SAML's RelayState. */
  state: string;
  /** OAuth only. */
  nonce: string | null;
  codeVerifier: string | null;
  /** SAML only: the AuthnRequest's ID, which the response's InResponseTo must name. */
  requestId: string | null;
}

/** The identity the upstream asserted, verified. Email and `email_verified` are as the upstream said. */
export interface UpstreamIdentity {
  /** Exact upstream issuer (`iss` of the ID token; the configured issuer for GitHub). */
  issuer: string;
  subject: string;
  email: string | null;
  /** True only when the upstream said so explicitly (ID token / UserInfo `email_verified === true`, GitHub's verified primary email). */
  emailVerified: boolean;
  name: string | null;
  /** The upstream's `amr` and `acr`, as sent (empty / null when absent). */
  amr: string[];
  acr: string | null;
  /**
   * Everything the upstream sent about the user, as received and verified (the ID token's and
   * UserInfo's claims; the SAML assertion's NameID, attributes and authentication context), bounded
   * (./identity.ts `receivedOf`): for a connection test's page only. A sign-in's round trip never
   * stores it (lib/federation/round-trip.ts `answerRoundTrip`).
   */
  received?: ReceivedAttribute[];
}

/** One attribute or claim as the upstream sent it: where it came from, its name, its values as text. */
export interface ReceivedAttribute {
  source: string;
  name: string;
  values: string[];
}

/**
 * Why a round trip failed, each with a hosted error page (lib/hosted/errors.ts `federation_*`):
 * - `upstream_unavailable`: discovery, token or API call failed to connect, timed out, or answered 5xx;
 * - `upstream_denied`: the upstream sent the user back with an `error` (access_denied, ...);
 * - `invalid_response`: anything that fails verification: state, `iss` (RFC 9207), ID token
 *   signature / issuer / audience / expiry, nonce, PKCE, missing code, UserInfo `sub` mismatch;
 * - `misconfigured`: the provider's settings cannot work (no secret, bad issuer URL, http issuer
 *   outside loopback).
 */
export type FederationErrorCode = "upstream_unavailable" | "upstream_denied" | "invalid_response" | "misconfigured";

export class FederationError extends Error {
  constructor(
    readonly code: FederationErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "FederationError";
  }
}

export interface UpstreamCall {
  /** The issuer the request came to (SAML's SP entity ID and ACS are under it). */
  issuer: string;
  /** The callback URL registered upstream: `<issuer>/federation/callback`. */
  redirectUri: string;
  /** lib/service.ts `Service.fetch`. */
  fetch: typeof fetch;
  /** The service clock (ID token time checks, Apple's client secret JWT). */
  now: Date;
}
