/**
 * GitHub: OAuth 2.0 (no ID token) through openid-client with state and PKCE checked, then the
 * user API: `/user` for the stable numeric id and the name, `/user/emails` for the primary
 * address and whether GitHub verified it.
 */
import * as client from "openid-client";
import { z } from "zod";
import { FederationError, type UpstreamCall, type UpstreamIdentity, type UpstreamProvider, type UpstreamStart } from "./contract";
import type { CallbackInput } from "./identity";
import { identityClaims } from "./identity";
import { guardedFetch, guardedGet, isLoopbackHttp, toFederationError, UPSTREAM_TIMEOUT_MS, upstreamUrl } from "./transport";

const githubUser = z.object({ id: z.number().int().positive(), login: z.string(), name: z.string().nullish() });
const githubEmails = z.array(z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() }));

function configure(provider: UpstreamProvider, call: UpstreamCall): client.Configuration {
  if (!provider.endpoints.authorization || !provider.endpoints.token || !provider.endpoints.api) throw new FederationError("misconfigured", "The GitHub endpoints are missing");
  if (!provider.clientSecret) throw new FederationError("misconfigured", "The client secret is missing");
  const urls = [provider.endpoints.authorization, provider.endpoints.token, provider.endpoints.api].map((u) => upstreamUrl(u, "GitHub endpoint"));
  const config = new client.Configuration(
    { issuer: provider.issuer, authorization_endpoint: urls[0]!.href, token_endpoint: urls[1]!.href },
    provider.clientId,
    { [client.clockSkew]: Math.round((call.now.getTime() - Date.now()) / 1000) },
    client.ClientSecretPost(provider.clientSecret),
  );
  config[client.customFetch] = guardedFetch(call);
  config.timeout = UPSTREAM_TIMEOUT_MS / 1000;
  if (urls.some(isLoopbackHttp)) client.allowInsecureRequests(config);
  return config;
}

export async function beginGithub(provider: UpstreamProvider, call: UpstreamCall): Promise<UpstreamStart> {
  try {
    const config = configure(provider, call);
    const state = client.randomState();
    const codeVerifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: call.redirectUri,
      response_type: "code",
      scope: provider.scopes.join(" "),
      state,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
    });
    // GitHub has no nonce (no ID token).
    return { url, state, nonce: null, codeVerifier, requestId: null };
  } catch (error) {
    throw toFederationError(error, "Sign-in start at GitHub");
  }
}

async function api<T>(call: UpstreamCall, base: string, path: string, token: string, schema: z.ZodType<T>): Promise<T> {
  const root = base.endsWith("/") ? base : `${base}/`;
  const response = await guardedGet(call, new URL(path, root), {
    accept: "application/vnd.github+json",
    authorization: `Bearer ${token}`,
    "x-github-api-version": "2022-11-28",
    "user-agent": "Latchkey",
  });
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    throw new FederationError("invalid_response", `GitHub's ${path} answered ${response.status}`);
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch (cause) {
    throw new FederationError("invalid_response", `GitHub's ${path} answer is not JSON`, { cause });
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new FederationError("invalid_response", `GitHub's ${path} answer has an unexpected shape`, { cause: parsed.error });
  return parsed.data;
}

export async function completeGithub(provider: UpstreamProvider, call: UpstreamCall, callback: CallbackInput): Promise<UpstreamIdentity> {
  try {
    if (!callback.expected.codeVerifier) throw new FederationError("invalid_response", "The round trip has no PKCE verifier");
    const config = configure(provider, call);
    const tokens = await client.authorizationCodeGrant(config, callback.response, {
      pkceCodeVerifier: callback.expected.codeVerifier,
      expectedState: callback.expected.state,
      idTokenExpected: false,
    });
    const user = await api(call, provider.endpoints.api!, "user", tokens.access_token, githubUser);
    const emails = await api(call, provider.endpoints.api!, "user/emails", tokens.access_token, githubEmails);
    const primary = emails.find((e) => e.primary) ?? null;
    return identityClaims({
      issuer: provider.issuer,
      // The numeric id, never the login: logins can be renamed and then taken by someone else.
      subject: String(user.id),
      profile: { email: primary?.email, email_verified: primary?.verified === true, name: user.name || user.login },
      fallbackName: null,
      amr: undefined,
      acr: undefined,
    });
  } catch (error) {
    throw toFederationError(error, "Sign-in at GitHub");
  }
}
