import { and, eq, sql } from "drizzle-orm";
import { clients } from "../../db/schema";
import type { Endpoint, EndpointContext } from "../http/context";
import { errorToResponse, OAuthError } from "./errors";
import { lightResponse, withHeaders } from "../http/response";
import { workspaceCacheKey } from "../service";

/**
 * The public documents (discovery, JWKS): readable from any origin without credentials, as the
 * major providers serve them, so a browser library can discover the issuer and verify ID tokens.
 */
export const PUBLIC_DOCUMENT_PATHS: ReadonlySet<string> = new Set(["/.well-known/openid-configuration", "/.well-known/jwks.json"]);

/** Endpoints a browser application (a public client) may call cross-origin. Never the authorize endpoint. */
const BROWSER_CLIENT_PATHS = ["/oauth2/token", "/oauth2/revoke", "/oidc/userinfo", "/oidc/session", "/oauth2/par"];

/** Every path that answers a CORS preflight: the browser-client endpoints and the public documents. */
export const CORS_PATHS: ReadonlySet<string> = new Set([...BROWSER_CLIENT_PATHS, ...PUBLIC_DOCUMENT_PATHS]);

/** DPoP-Nonce: a browser client signs its next DPoP proof with it (lib/oauth/dpop). */
const EXPOSED = "WWW-Authenticate, Retry-After, DPoP-Nonce";
/** As long as a browser may cache our preflight answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

export function deniedOrigin(): OAuthError {
  return new OAuthError(403, "invalid_request", "This origin is not allowed for this client");
}

/** Adds the CORS grant for one exact, already-verified origin. */
export function withCors(response: Response, origin: string | null): Response {
  if (!origin) return response;
  return withHeaders(response, { "Access-Control-Allow-Origin": origin, Vary: "Origin", "Access-Control-Expose-Headers": EXPOSED });
}

/** The public documents' grant: any origin, never credentials (no cookie is read there). */
export function withPublicCors(response: Response): Response {
  return withHeaders(response, { "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": EXPOSED });
}

/** A public document's endpoint whose every answer, errors included, any origin may read. */
export function publicDocument(endpoint: Endpoint): Endpoint {
  return async (request, ctx) => {
    try {
      return withPublicCors(await endpoint(request, ctx));
    } catch (error) {
      return withPublicCors(errorToResponse(error));
    }
  };
}

/** The request's Origin must be one the (public) client registered; returns it, or throws 403. */
export function verifyBrowserOrigin(request: Request, client: { type: string; allowedOrigins: string[] }): string | null {
  const origin = request.headers.get("origin");
  if (origin === null) return null;
  if (client.type !== "PUBLIC" || !client.allowedOrigins.includes(origin)) throw deniedOrigin();
  return origin;
}

type OriginMemo = Map<string, number>;
/** Bounds the memo whatever the registrations; entries are only origins the database confirmed. */
const ORIGIN_MEMO_LIMIT = 1_000;

function originMemo(ctx: EndpointContext): OriginMemo {
  const key = workspaceCacheKey("cors-origins", ctx.workspace.id);
  let memo = ctx.service.cache.get(key) as OriginMemo | undefined;
  if (!memo) ctx.service.cache.set(key, (memo = new Map()));
  return memo;
}

/**
 * The workspace rule for an origin before the client is known (preflight, or an error answered
 * before the client or token is identified): some active public client of the workspace
 * registered it. When the database cannot answer, an origin it confirmed within the preflight
 * lifetime still counts, so a 503 stays readable as a 503: the browser trusts that preflight as
 * long, and the answer grants nothing but the reading of an error.
 */
export async function isRegisteredOrigin(ctx: EndpointContext, origin: string): Promise<boolean> {
  const memo = originMemo(ctx);
  const now = ctx.service.clock.now().getTime();
  let row: { id: string } | undefined;
  try {
    [row] = await ctx.service.db
      .select({ id: clients.id })
      .from(clients)
      .where(and(eq(clients.workspaceId, ctx.workspace.id), eq(clients.type, "PUBLIC"), eq(clients.active, true), sql`${clients.allowedOrigins} @> ${JSON.stringify([origin])}::jsonb`))
      .limit(1);
  } catch (error) {
    const confirmedAt = memo.get(origin);
    if (confirmedAt !== undefined && now - confirmedAt < PREFLIGHT_MAX_AGE_SECONDS * 1000) return true;
    throw error;
  }
  memo.delete(origin); // re-inserted last when confirmed: the oldest confirmation is dropped first
  if (!row) return false;
  if (memo.size >= ORIGIN_MEMO_LIMIT) memo.delete(memo.keys().next().value!);
  memo.set(origin, now);
  return true;
}

/**
 * An error answered before the endpoint knows the client (unknown or invalid token, unknown
 * client, malformed request, 503): readable by an origin under the workspace rule, so the page
 * sees the status it must branch on. A 403 is the refusal of the origin itself and stays unreadable.
 */
export async function withCorsForUnknownClient(response: Response, request: Request, ctx: EndpointContext): Promise<Response> {
  const origin = request.headers.get("origin");
  if (origin === null || response.status === 403) return response;
  let registered: boolean;
  try {
    registered = await isRegisteredOrigin(ctx, origin);
  } catch {
    registered = false; // the database is down and the origin unconfirmed: the error stands, unreadable
  }
  return registered ? withCors(response, origin) : withHeaders(response, { Vary: "Origin" });
}

/** A browser-callable endpoint's failure before its client is known, mapped and answered under the workspace rule. */
export function answerUnknownClientError(error: unknown, request: Request, ctx: EndpointContext): Promise<Response> {
  return withCorsForUnknownClient(errorToResponse(error), request, ctx);
}

/**
 * Preflight for the issuer's path `subpath`: the client is not known yet (no body, no token), so
 * the origin must be registered by some active public client of the workspace; the real request
 * then checks its own client. The public documents answer any origin.
 */
export async function preflight(request: Request, ctx: EndpointContext, subpath: string): Promise<Response> {
  const origin = request.headers.get("origin");
  if (!origin) return lightResponse(null, 400, {});
  if (PUBLIC_DOCUMENT_PATHS.has(subpath)) {
    return lightResponse(null, 204, {
      "Access-Control-Allow-Origin": "*",
      "Access-Control-Allow-Methods": "GET, HEAD",
      "Access-Control-Max-Age": String(PREFLIGHT_MAX_AGE_SECONDS),
    });
  }
  if (!(await isRegisteredOrigin(ctx, origin))) return lightResponse(null, 403, { Vary: "Origin" });
  return lightResponse(null, 204, {
    "Access-Control-Allow-Origin": origin,
    "Access-Control-Allow-Methods": "GET, POST",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, DPoP",
    "Access-Control-Max-Age": String(PREFLIGHT_MAX_AGE_SECONDS),
    Vary: "Origin",
  });
}
