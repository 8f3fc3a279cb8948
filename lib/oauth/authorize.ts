import type { Endpoint, EndpointContext } from "../http/context";
import { unstorableParameter } from "../http/form";
import { isLoopbackPublicUrl } from "../config";
import { hostedError, type HostedErrorDetailLine } from "../hosted/errors";
import { getLiveSession } from "../authn/hosted-session";
import { sessionMeetsPolicy } from "../authn/policy";
import { errorRedirect, issueCodeRedirect, type CodeRequest } from "./authorization-response";
import { findClient, type ClientRow } from "./clients";
import { openPendingSignIn } from "./pending-sign-in";
import { PUSH_REQUIRED, pushedRequestRequired, resolvePushedRequest } from "./pushed-authorization/authorize";
import { checkRequestedScope, ScopeRefused } from "./requested-scope";

const REQUIRED = ["client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "code_challenge", "code_challenge_method"];
const KNOWN = new Set([...REQUIRED, "resource"]);
const UNSUPPORTED = new Set(["prompt", "max_age", "login_hint", "organization", "connection", "response_mode", "audience"]);
const BASE64URL_24_128 = /^[A-Za-z0-9_-]{24,128}$/;
/** Where settings for common client libraries are written down: errors about what a library sends point there. */
export const RECIPES_PATH = "docs/recipes/README.md";
/** The longest received value a hosted error page shows (the longest a redirect URI may be registered). */
const SHOWN_VALUE_LIMIT = 2000;
/** base64url of a SHA-256 digest, unpadded: exactly 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/**
 * What was received for a state or nonce that breaks the 24–128 base64url rule, never the value
 * itself: its length in characters and whether it is base64url.
 */
function receivedShape(value: string): { length: number; base64url: boolean } {
  return { length: [...value].length, base64url: /^[A-Za-z0-9_-]*$/.test(value) };
}

/** The nonce refusal sent to the callback: the rule, what was received, where the settings are. ASCII only (RFC 6749 §4.1.2.1). */
function nonceDescription(value: string): string {
  const { length, base64url } = receivedShape(value);
  const received = base64url ? `${length} characters, all base64url` : `${length} characters, not all base64url (only A-Z, a-z, 0-9, - and _, without = padding)`;
  return `nonce must be 24-128 base64url characters; received ${received}. Settings for common client libraries: ${RECIPES_PATH}`;
}

/** The hosted page's lines for an unusable state: how many were received, the one's shape, where the settings are. */
function stateDetails(states: string[]): HostedErrorDetailLine[] {
  let received: HostedErrorDetailLine;
  if (states.length === 0) received = { message: "error.detail.state_none" };
  else if (states.length > 1) received = { message: "error.detail.state_repeated", params: { count: states.length } };
  else {
    const { length, base64url } = receivedShape(states[0]);
    received = { message: base64url ? "error.detail.received_base64url" : "error.detail.received_not_base64url", params: { length } };
  }
  return [received, { message: "error.detail.recipes", values: [RECIPES_PATH] }];
}

const shown = (value: string) => (value.length > SHOWN_VALUE_LIMIT ? `${value.slice(0, SHOWN_VALUE_LIMIT)}…` : value);

/** The console page of an application, at the tab where its redirect URIs are edited (app/console/(app)/w/[workspace]/applications/[clientId]). */
export function consoleApplicationUrl(publicUrl: string, workspaceId: string, clientId: string): string {
  return `${publicUrl}/console/w/${workspaceId}/applications/${encodeURIComponent(clientId)}?tab=settings`;
}

/**
 * The hosted page's lines for a redirect URI that is not one of the client's: what was received
 * and, on a development issuer only (PUBLIC_URL on http loopback), what is registered and where to
 * change it. A production issuer never lists an application's callbacks to an unauthenticated caller.
 */
function redirectUriDetails(ctx: EndpointContext, client: ClientRow, received: string[]): HostedErrorDetailLine[] {
  const lines: HostedErrorDetailLine[] = [];
  if (received.length === 0 || (received.length === 1 && received[0] === "")) lines.push({ message: "error.detail.redirect_uri_none" });
  else if (received.length === 1) lines.push({ message: "error.detail.redirect_uri_received", values: [shown(received[0])] });
  else lines.push({ message: "error.detail.redirect_uri_repeated", params: { count: received.length }, values: received.map(shown) });
  const { publicUrl } = ctx.service.config;
  if (isLoopbackPublicUrl(publicUrl)) {
    lines.push(client.redirectUris.length > 0 ? { message: "error.detail.redirect_uris_registered", values: client.redirectUris } : { message: "error.detail.redirect_uris_none_registered" });
    lines.push({ message: "error.detail.edit_application", link: consoleApplicationUrl(publicUrl, ctx.workspace.id, client.clientId) });
  }
  return lines;
}

/** An authorization-request error raised after client and redirect URI are verified: it goes to the callback. */
export class RedirectableError extends Error {
  constructor(
    readonly error: "invalid_request" | "invalid_scope" | "access_denied" | "server_error",
    readonly description: string,
  ) {
    super(description);
  }
}

/** The request once every step passed: what a code is issued for, with the client row. */
export interface ValidatedAuthorization extends Omit<CodeRequest, "clientPk"> {
  client: ClientRow;
}

type Step = (params: URLSearchParams, ctx: EndpointContext, acc: Partial<ValidatedAuthorization>) => Promise<void> | void;

// Each step checks one row of SPEC.md's authorization-request table and throws a typed error.
const steps: Step[] = [
  function noDuplicates(params) {
    const seen = new Set<string>();
    for (const name of params.keys()) {
      if (seen.has(name)) throw new RedirectableError("invalid_request", `Parameter ${name} is duplicated`);
      seen.add(name);
    }
  },
  function noUnsupported(params) {
    for (const name of params.keys()) {
      if (UNSUPPORTED.has(name)) throw new RedirectableError("invalid_request", `Parameter ${name} is not supported`);
      if (!KNOWN.has(name)) throw new RedirectableError("invalid_request", `Parameter ${name} is not recognized`);
    }
    for (const name of REQUIRED) {
      if (!params.get(name)) throw new RedirectableError("invalid_request", `Parameter ${name} is required`);
    }
  },
  function responseType(params) {
    if (params.get("response_type") !== "code") throw new RedirectableError("invalid_request", "response_type must be code");
  },
  function nonce(params, _ctx, acc) {
    const value = params.get("nonce")!;
    if (!BASE64URL_24_128.test(value)) throw new RedirectableError("invalid_request", nonceDescription(value));
    if (value === acc.state) throw new RedirectableError("invalid_request", "nonce must be generated independently of state");
    acc.nonce = value;
  },
  function pkce(params, _ctx, acc) {
    if (params.get("code_challenge_method") !== "S256") throw new RedirectableError("invalid_request", "code_challenge_method must be S256");
    const challenge = params.get("code_challenge")!;
    if (!S256_CHALLENGE.test(challenge)) {
      throw new RedirectableError("invalid_request", "code_challenge must be the unpadded base64url SHA-256 of the verifier");
    }
    acc.codeChallenge = challenge;
  },
  async function resourceAndScope(params, ctx, acc) {
    try {
      const { scope, apiId } = await checkRequestedScope(ctx, acc.client!, params.get("scope")!, params.get("resource"));
      acc.apiId = apiId;
      acc.scope = scope;
    } catch (error) {
      if (error instanceof ScopeRefused) throw new RedirectableError("invalid_scope", error.message);
      throw error;
    }
  },
];

/**
 * A request refused before its client and exact redirect URI are verified: nothing may be sent to
 * any redirect URI. The authorize endpoint shows it on the hosted page (`code`, `details`); the
 * pushed authorization request endpoint answers it as JSON (`description`).
 */
export interface UnverifiedRefusal {
  code: "unstorable_sign_in_request" | "client_id_duplicated" | "client_id_missing" | "unknown_application" | "machine_client" | "invalid_redirect_uri" | "invalid_state";
  description: string;
  details?: HostedErrorDetailLine[];
}

/** What the authorization request's rules decided: the validated request, a refusal shown at the issuer, or an error for the verified callback. */
export type AuthorizationVerdict =
  | { kind: "valid"; authz: ValidatedAuthorization }
  | { kind: "unverified"; refusal: UnverifiedRefusal }
  | { kind: "redirect"; redirectUri: string; state: string; error: RedirectableError["error"]; description: string };

/**
 * Every rule of SPEC.md's authorization request, in order, over the request's parameters: the
 * front channel's query, or the parameters an application pushed (lib/oauth/pushed-authorization),
 * which are held to exactly the same rules. `pushed`: the parameters arrived by a pushed request,
 * so an application that requires pushing is satisfied.
 */
export async function validateAuthorizationRequest(params: URLSearchParams, ctx: EndpointContext, options: { pushed: boolean }): Promise<AuthorizationVerdict> {
  const refuse = (code: UnverifiedRefusal["code"], description: string, details?: HostedErrorDetailLine[]): AuthorizationVerdict => ({ kind: "unverified", refusal: { code, description, details } });
  // Before any lookup, so the hosted page answers (nothing is verified yet to redirect to).
  if (unstorableParameter(params) !== null) return refuse("unstorable_sign_in_request", "The request holds text that cannot be stored");
  // Until the client and its exact redirect URI are verified, nothing is sent to any redirect URI.
  const clientIds = params.getAll("client_id");
  const redirectUris = params.getAll("redirect_uri");
  if (clientIds.length !== 1 || !clientIds[0]) {
    return clientIds.length > 1 ? refuse("client_id_duplicated", "Parameter client_id is duplicated") : refuse("client_id_missing", "Parameter client_id is required");
  }
  const client = await findClient(ctx, clientIds[0]);
  if (!client || !client.active) return refuse("unknown_application", "The client is unknown or disabled");
  if (client.type === "M2M") return refuse("machine_client", "Machine-to-machine clients cannot use the authorization endpoint");
  if (redirectUris.length !== 1 || !client.redirectUris.includes(redirectUris[0])) {
    return refuse("invalid_redirect_uri", "redirect_uri must be exactly one of the client's registered redirect URIs", redirectUriDetails(ctx, client, redirectUris));
  }
  const redirectUri = redirectUris[0];
  const states = params.getAll("state");
  const state = states.length === 1 ? states[0] : null;
  if (state === null || !BASE64URL_24_128.test(state)) {
    // Without a usable state the client cannot correlate an error response: show it here instead.
    return refuse("invalid_state", "state must be given once, as 24-128 base64url characters", stateDetails(states));
  }
  const acc: Partial<ValidatedAuthorization> = { client, redirectUri, state };
  try {
    if (!options.pushed && pushedRequestRequired(client)) throw new RedirectableError("invalid_request", PUSH_REQUIRED);
    for (const step of steps) await step(params, ctx, acc);
  } catch (error) {
    if (error instanceof RedirectableError) return { kind: "redirect", redirectUri, state, error: error.error, description: error.description };
    throw error;
  }
  return { kind: "valid", authz: acc as ValidatedAuthorization };
}

export const authorizeEndpoint: Endpoint = async (request, ctx) => {
  let params = new URL(request.url).searchParams;
  if (unstorableParameter(params) !== null) return hostedError("unstorable_sign_in_request");
  // A pushed request (RFC 9126): client_id and request_uri name parameters the application sent on the back channel.
  const pushed = params.has("request_uri");
  if (pushed) {
    const resolved = await resolvePushedRequest(params, ctx);
    if ("refusal" in resolved) return hostedError(resolved.refusal);
    params = resolved.params;
  }
  const verdict = await validateAuthorizationRequest(params, ctx, { pushed });
  if (verdict.kind === "unverified") {
    const { code, details } = verdict.refusal;
    return details ? hostedError(code, { details }) : hostedError(code);
  }
  if (verdict.kind === "redirect") return errorRedirect(verdict.redirectUri, ctx.issuer, verdict.error, verdict.description, verdict.state);
  const { authz } = verdict;
  const { client } = authz;

  const session = await getLiveSession(ctx, request.headers.get("cookie"));
  // A live session is reused only when what it proved meets this application's policy; otherwise
  // the sign-in steps it up (asks for what is missing), never treats it as if it did.
  if (session && (await sessionMeetsPolicy(ctx, client.id, session))) {
    return issueCodeRedirect(ctx, { ...authz, clientPk: client.id }, session);
  }
  return openPendingSignIn(ctx, { ...authz, clientPk: client.id }, session ?? undefined);
};
