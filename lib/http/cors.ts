import { and, eq, sql } from "drizzle-orm";
import { clients } from "../../db/schema";
import type { EndpointContext } from "./context";
import { OAuthError } from "./errors";
import { lightResponse, withHeaders } from "./response";

/** Endpoints a browser application (a public client) may call cross-origin. Never the authorize endpoint. */
export const CORS_PATHS = new Set(["/oauth2/token", "/oauth2/revoke", "/oidc/userinfo", "/oidc/session"]);

export function deniedOrigin(): OAuthError {
  return new OAuthError(403, "invalid_request", "This origin is not allowed for this client");
}

/** Adds the CORS grant for one exact, already-verified origin. */
export function withCors(response: Response, origin: string | null): Response {
  if (!origin) return response;
  return withHeaders(response, { "Access-Control-Allow-Origin": origin, Vary: "Origin", "Access-Control-Expose-Headers": "WWW-Authenticate, Retry-After" });
}

/** The request's Origin must be one the (public) client registered; returns it, or throws 403. */
export function verifyBrowserOrigin(request: Request, client: { type: string; allowedOrigins: string[] }): string | null {
  const origin = request.headers.get("origin");
  if (origin === null) return null;
  if (client.type !== "PUBLIC" || !client.allowedOrigins.includes(origin)) throw deniedOrigin();
  return origin;
}

/**
 * Preflight: the client is not known yet (no body, no token), so the origin must be registered by
 * some active public client of the workspace; the real request then checks its own client.
 */
export async function preflight(request: Request, ctx: EndpointContext): Promise<Response> {
  const origin = request.headers.get("origin");
  if (!origin) return lightResponse(null, 400, {});
  const [row] = await ctx.service.db
    .select({ id: clients.id })
    .from(clients)
    .where(and(eq(clients.workspaceId, ctx.workspace.id), eq(clients.type, "PUBLIC"), eq(clients.active, true), sql`${clients.allowedOrigins} @> ${JSON.stringify([origin])}::jsonb`))
    .limit(1);
  if (!row) return lightResponse(null, 403, { Vary: "Origin" });
  return lightResponse(null, 204, {
    "Access-Control-Allow-Origin": origin,
    "Access-Control-Allow-Methods": "GET, POST",
    "Access-Control-Allow-Headers": "Authorization, Content-Type",
    "Access-Control-Max-Age": "600",
    Vary: "Origin",
  });
}
