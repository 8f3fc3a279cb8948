/**
 * The backend handoff's shared rules (SPEC.md "Account-security authentication"): how a customer
 * server's call is read (no Origin, exactly `?client_id=`, HTTP Basic through the one client
 * authentication of lib/oauth/clients.ts, a WEB_CONFIDENTIAL client, a JSON object of at most
 * 2 KiB with exactly the endpoint's members, each once), how the user's real access token is
 * judged (lib/authority's access-token chain), and the endpoint wrapper that answers every failure
 * in the handoff's own error shape (./errors.ts). Never a 500 for something a client sent.
 */
import type { AuditEventType } from "../audit/catalogue";
import { recordAudit } from "../audit/events";
import { addMs, SECOND } from "../clock";
import type { Endpoint, EndpointContext } from "../http/context";
import { clientAddressOf } from "../http/client-address";
import { failureResponse } from "../http/errors";
import { readJsonObject } from "../http/json";
import { loadTokenAuthority, type HumanToken } from "../oauth/authority";
import { authenticateClient, type ClientRow } from "../oauth/clients";
import { OAuthError } from "../oauth/errors";
import { isStorableText } from "../text";
import {
  handoffBadRequest,
  handoffFailures,
  handoffInvalidClient,
  handoffPayloadTooLarge,
  handoffRateLimited,
  handoffUnstorable,
  handoffUnsupportedMediaType,
  notAvailable,
  originRefused,
  reauthenticationRequired,
} from "./errors";

/** Handoff bodies are small: the same 2 KiB as the permission check. */
const HANDOFF_BODY_LIMIT = 2 * 1024;
/** SPEC: a launch is single use and expires after 120 seconds. */
export const LAUNCH_TTL_MS = 120 * SECOND;
/** SPEC: a completion handle lives at most 30 seconds and is single use. */
export const COMPLETION_TTL_MS = 30 * SECOND;
/** The only intent today: open the portal to manage the account's security. */
export const HANDOFF_INTENT = "manage";
/** SPEC: state is at least 32 random bytes as base64url, 43–128 characters. */
export const STATE_PATTERN = /^[A-Za-z0-9_-]{43,128}$/;
/** Access tokens, challenges and handles are far shorter; anything longer is no such value. */
const MAX_TOKEN_LENGTH = 512;

/** `expires_at` of the launch and approve answers: Unix time in milliseconds (an integer). */
export const expiresAt = (at: Date) => at.getTime();
export const after = (ctx: EndpointContext, ms: number) => addMs(ctx.service.clock.now(), ms);

export interface HandoffCall {
  client: ClientRow;
  body: Record<string, unknown>;
}

/** The client_id of the query, which must hold exactly that one parameter, once. */
function queryClientId(request: Request): string {
  const query = new URL(request.url).searchParams;
  const names = [...query.keys()];
  if (names.length !== 1 || names[0] !== "client_id") throw handoffBadRequest("The query must be exactly ?client_id=<client_id>");
  const clientId = query.get("client_id")!;
  if (clientId === "" || !isStorableText(clientId)) throw handoffBadRequest("client_id must be a nonempty client ID");
  return clientId;
}

/** Client authentication by the one rule (lib/oauth/clients.ts), its refusals in the handoff's shape. */
async function authenticate(request: Request, ctx: EndpointContext, clientId: string): Promise<ClientRow> {
  if (!request.headers.has("authorization")) throw handoffInvalidClient("HTTP Basic client authentication is required");
  try {
    const { client, method } = await authenticateClient(request, new Map([["client_id", clientId]]), ctx);
    if (method !== "client_secret_basic") throw handoffInvalidClient();
    return client;
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    if (error.status === 429) throw handoffRateLimited(Number(error.options.headers?.["Retry-After"] ?? "60"));
    if (error.error === "invalid_client") throw handoffInvalidClient(error.description);
    if (error.status === 403) throw originRefused();
    throw handoffBadRequest(error.description);
  }
}

/**
 * Reads a handoff call: no `Origin` header, `?client_id=` only, HTTP Basic for that client (of
 * type WEB_CONFIDENTIAL), then a JSON object of at most 2 KiB with exactly `members`, once each.
 */
export async function readHandoffCall(request: Request, ctx: EndpointContext, members: readonly string[]): Promise<HandoffCall> {
  if (request.headers.has("origin")) throw originRefused();
  const clientId = queryClientId(request);
  const client = await authenticate(request, ctx, clientId);
  if (client.type !== "WEB_CONFIDENTIAL") throw notAvailable("Only confidential server web applications (WEB_CONFIDENTIAL) can use the backend handoff");
  const body = await readJsonObject(request, {
    limit: HANDOFF_BODY_LIMIT,
    members,
    membersDescription: `The body must have exactly the members ${members.join(", ")}, once each`,
    refuse: { unsupportedMediaType: handoffUnsupportedMediaType, tooLarge: handoffPayloadTooLarge, badRequest: handoffBadRequest },
  });
  return { client, body };
}

/** A nonempty string member of at most `max` characters that the database can hold. */
export function stringMember(body: Record<string, unknown>, name: string, max = MAX_TOKEN_LENGTH): string {
  const value = body[name];
  if (typeof value !== "string" || value === "" || value.length > max) throw handoffBadRequest(`${name} must be a nonempty string of at most ${max} characters`);
  if (!isStorableText(value)) throw handoffUnstorable();
  return value;
}

/** The `state` member: 43–128 base64url characters. */
export function stateMember(body: Record<string, unknown>): string {
  const state = body.state;
  if (typeof state !== "string" || !STATE_PATTERN.test(state)) throw handoffBadRequest("state must be 43–128 base64url characters (at least 32 random bytes)");
  return state;
}

/**
 * The application offers the portal and has a saved handoff configuration (NOT_AVAILABLE
 * otherwise). Returns the configuration.
 */
export function requireHandoffOffered(client: ClientRow): { callbackUri: string; returnUri: string } {
  if (!client.accountSecurity || !client.active) throw notAvailable("This application does not offer the account-security portal");
  if (!client.handoffCallbackUri || !client.handoffReturnUri) throw notAvailable("This application has no saved handoff configuration (callback_uri and return_uri)");
  return { callbackUri: client.handoffCallbackUri, returnUri: client.handoffReturnUri };
}

/**
 * The user's real access token for this client, live with its whole authority chain (token,
 * grant, hosted session, user, client, …: lib/authority, judged in the lookup's own statement).
 * Anything else (unknown, expired, revoked, another client's, a workload's token) is
 * REAUTHENTICATION_REQUIRED: the customer must revalidate the session or sign the user in again.
 */
export async function requireUserToken(ctx: EndpointContext, client: ClientRow, body: Record<string, unknown>): Promise<HumanToken> {
  const token = stringMember(body, "user_token");
  const authority = await loadTokenAuthority(ctx, token);
  if (!authority || authority.kind !== "human" || !authority.active || authority.clientPk !== client.id) throw reauthenticationRequired();
  return authority;
}

/** Records one handoff event in the audit log. */
export async function auditHandoff(
  ctx: EndpointContext,
  request: Request,
  input: { type: Extract<AuditEventType, `account_security.${string}`>; client: Pick<ClientRow, "clientId">; subject?: string | null; data?: Record<string, unknown>; reason?: string },
): Promise<void> {
  await recordAudit(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    type: input.type,
    clientId: input.client.clientId,
    subject: input.subject ?? null,
    reason: input.reason ?? null,
    data: input.data ?? {},
    ip: clientAddressOf(request.headers, ctx.service.config.trustProxy),
    at: ctx.service.clock.now(),
  });
}

/** A handoff endpoint: every failure answered in the handoff's shape, 503 when authority cannot be confirmed. */
export function handoffEndpoint(name: string, handler: Endpoint): Endpoint {
  return async (request, ctx) => {
    try {
      return await handler(request, ctx);
    } catch (error) {
      return failureResponse(handoffFailures, error, name);
    }
  };
}
