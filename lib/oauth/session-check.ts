import { epochSeconds } from "../clock";
import type { Endpoint } from "../http/context";
import { json } from "../http/errors";
import { invalidToken, loadHumanAuthority, readBearer } from "./bearer";

/**
 * GET /oidc/session: 200 `{active: true, ...}` only while the token and its whole authority chain
 * are current; 401 otherwise (M2M tokens have no grant or session and never pass).
 */
export const sessionCheckEndpoint: Endpoint = async (request, ctx) => {
  const token = readBearer(request);
  const authority = await loadHumanAuthority(ctx, token);
  if (!authority) throw invalidToken();
  return json({ active: true, iss: ctx.issuer, client_id: authority.clientId, sub: authority.subject, exp: epochSeconds(authority.expiresAt) });
};
