import type { Endpoint } from "../http/context";
import { json } from "../http/errors";
import { errorToResponse, invalidRequest, unsupportedGrantType } from "./errors";
import { answerUnknownClientError, withCors } from "./cors";
import { readOAuthForm } from "./form";
import { authenticateClient, type AuthenticatedClient } from "./clients";
import { GRANTS } from "./grants";
import type { GrantHandler } from "./grants/types";
import { signal } from "../signals";
import { withHeaders } from "../http/response";
import { tokenRequestSender, tokenResponseHeaders } from "./dpop/token-request";

export const tokenEndpoint: Endpoint = async (request, ctx) => {
  let client: AuthenticatedClient;
  let params: Map<string, string>;
  let grant: GrantHandler;
  try {
    params = await readOAuthForm(request);
    const grantType = params.get("grant_type");
    if (!grantType) throw invalidRequest("grant_type is required");
    const found = GRANTS.get(grantType);
    if (!found) throw unsupportedGrantType(`grant_type ${grantType} is not supported`);
    grant = found;
    client = await authenticateClient(request, params, ctx);
  } catch (error) {
    return answerUnknownClientError(error, request, ctx);
  }
  // From here on a browser client may read the answer, errors included.
  // A request with a DPoP proof is answered with a fresh nonce, whatever the answer (lib/oauth/dpop).
  const dpop = tokenResponseHeaders(request, ctx);
  try {
    for (const name of params.keys()) {
      if (!grant.parameters.has(name)) throw invalidRequest(`Parameter ${name} is not recognized for ${grant.grantType}`);
    }
    const allowed = await allowedClient(grant, client);
    // The proof holds (or none is required) before the grant consumes anything.
    const proving = tokenRequestSender(request, ctx, allowed.client);
    const sender = proving && (await proving);
    const issued = await grant.handle(params, allowed, ctx, request, sender);
    // Every grant issues here, and only here: the one signal of tokens issued (lib/signals).
    signal("token_issued", { grantType: grant.grantType, workspaceId: ctx.workspace.id, clientId: client.client.clientId });
    return withCors(json(issued, 200, dpop), client.corsOrigin);
  } catch (error) {
    const response = errorToResponse(error);
    return withCors(dpop ? withHeaders(response, dpop) : response, client.corsOrigin);
  }
};

/**
 * Whether the client may use the grant (node-oidc-provider's `grantTypeAllowed`), checked once
 * here, before its handler. A memoized credential is confirmed first, so a secret or client that
 * is no longer live is still refused as invalid_client; and the full lookup a handler falls back
 * to for a memoized client (its type may have changed since) is checked again.
 */
async function allowedClient(grant: GrantHandler, authenticated: AuthenticatedClient): Promise<AuthenticatedClient> {
  const { unconfirmed } = authenticated;
  if (!grant.clients.types.has(authenticated.client.type)) {
    if (unconfirmed) await unconfirmed.authenticate();
    throw invalidRequest(grant.clients.refusal);
  }
  if (!unconfirmed) return authenticated;
  return { ...authenticated, unconfirmed: { confirm: () => unconfirmed.confirm(), authenticate: async () => allowedClient(grant, await unconfirmed.authenticate()) } };
}
