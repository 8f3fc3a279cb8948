import { epochSeconds } from "../clock";
import type { Endpoint } from "../http/context";
import { answerUnknownClientError, withCors } from "./cors";
import { json } from "../http/errors";
import { requireHumanToken } from "./bearer";

/**
 * GET /oidc/session: 200 `{active: true, ...}` only while the token and its whole authority chain
 * are current; 401 otherwise (M2M tokens have no grant or session and never pass).
 */
export const sessionCheckEndpoint: Endpoint = async (request, ctx) => {
  try {
    const { authority, origin, headers } = await requireHumanToken(request, ctx, "/oidc/session");
    return withCors(json({ active: true, iss: ctx.issuer, client_id: authority.clientId, sub: authority.subject, exp: epochSeconds(authority.expiresAt) }, 200, headers), origin);
  } catch (error) {
    // Every failure comes before the token's client is confirmed.
    return answerUnknownClientError(error, request, ctx);
  }
};
