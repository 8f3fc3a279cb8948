import { eq } from "drizzle-orm";
import { clients } from "../../db/schema";
import type { EndpointContext } from "../http/context";
import { verifyBrowserOrigin } from "./cors";
import { OAuthError } from "./errors";
import { loadTokenAuthority, type HumanToken } from "./authority";

export function invalidToken(description = "The access token is invalid or expired"): OAuthError {
  return new OAuthError(401, "invalid_token", description, {
    headers: { "WWW-Authenticate": `Bearer error="invalid_token", error_description="${description}"` },
  });
}

/** The token of `Authorization: Bearer <token>` (RFC 6750 token68 syntax), or null. */
export function bearerToken(request: Request): string | null {
  const header = request.headers.get("authorization");
  return (header && /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(header)?.[1]) || null;
}

/** The bearer token of `Authorization: Bearer <token>`; a missing or malformed header is a 401. */
export function readBearer(request: Request): string {
  const token = bearerToken(request);
  if (!token) {
    throw new OAuthError(401, "invalid_request", "A bearer access token is required", { headers: { "WWW-Authenticate": 'Bearer realm="latchkey"' } });
  }
  return token;
}

/**
 * A live human token with the `openid` scope, or null. Workload (M2M) tokens never qualify:
 * UserInfo and the session check refuse them.
 */
export async function loadHumanAuthority(ctx: EndpointContext, token: string): Promise<HumanToken | null> {
  const authority = await loadTokenAuthority(ctx, token);
  if (!authority || authority.kind !== "human" || !authority.active || !authority.scope.includes("openid")) return null;
  return authority;
}

/**
 * UserInfo and the session check: a live human token; from a browser, only from an origin its
 * (public) client registered. Returns the authority and the origin to grant CORS to.
 */
export async function requireHumanToken(request: Request, ctx: EndpointContext): Promise<{ authority: HumanToken; origin: string | null }> {
  const authority = await loadHumanAuthority(ctx, readBearer(request));
  if (!authority) throw invalidToken();
  const origin = request.headers.get("origin");
  if (origin !== null) {
    const [client] = await ctx.service.db.select({ type: clients.type, allowedOrigins: clients.allowedOrigins }).from(clients).where(eq(clients.id, authority.clientPk)).limit(1);
    if (!client) throw invalidToken();
    verifyBrowserOrigin(request, client);
  }
  return { authority, origin };
}
