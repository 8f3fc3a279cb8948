import { eq } from "drizzle-orm";
import { clients } from "../../db/schema";
import type { EndpointContext } from "../http/context";
import { verifyBrowserOrigin } from "./cors";
import { OAuthError } from "./errors";
import { loadTokenAuthority, type HumanToken } from "./authority";
import { BOUND_AS_BEARER, presentedToken, provenToken, resourceResponseHeaders, type PresentedToken } from "./dpop/resource";
import { refuseAtResource } from "./dpop/refusals";

export function invalidToken(description = "The access token is invalid or expired"): OAuthError {
  return new OAuthError(401, "invalid_token", description, {
    headers: { "WWW-Authenticate": `Bearer error="invalid_token", error_description="${description}"` },
  });
}

/** A missing or malformed `Authorization` header (lib/oauth/dpop/resource.ts `presentedToken`). */
const missingToken = () =>
  new OAuthError(401, "invalid_request", "A bearer access token is required", { headers: { "WWW-Authenticate": 'Bearer realm="latchkey"' } });

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
 * UserInfo and the session check (`path`, below the issuer): a live human token, as `Bearer`, or
 * as `DPoP` with a proof of the key it is bound to (lib/oauth/dpop); from a browser, only from an
 * origin its (public) client registered. Returns the authority, the origin to grant CORS to and
 * the headers the answer carries (a DPoP nonce).
 */
export async function requireHumanToken(
  request: Request,
  ctx: EndpointContext,
  path: string,
): Promise<{ authority: HumanToken; origin: string | null; headers: Record<string, string> }> {
  const presented: PresentedToken | null = presentedToken(request);
  if (!presented) throw missingToken();
  const authority = presented.dpop
    ? await provenToken(request, ctx, { target: { path }, token: presented.token }, refuseAtResource, () => loadHumanAuthority(ctx, presented.token), (a) => a.jkt)
    : await loadHumanAuthority(ctx, presented.token);
  if (!authority) throw invalidToken();
  if (!presented.dpop && authority.jkt !== null) throw invalidToken(BOUND_AS_BEARER);
  const origin = request.headers.get("origin");
  if (origin !== null) {
    const [client] = await ctx.service.db.select({ type: clients.type, allowedOrigins: clients.allowedOrigins }).from(clients).where(eq(clients.id, authority.clientPk)).limit(1);
    if (!client) throw invalidToken();
    verifyBrowserOrigin(request, client);
  }
  return { authority, origin, headers: resourceResponseHeaders(ctx, presented) };
}
