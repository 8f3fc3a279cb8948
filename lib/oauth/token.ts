import type { Endpoint } from "../http/context";
import { errorToResponse, invalidRequest, json, unsupportedGrantType } from "../http/errors";
import { withCors } from "../http/cors";
import { readOAuthForm } from "../http/form";
import { authenticateClient } from "./clients";
import { authorizationCodeGrant } from "./grants/authorization-code";
import { clientCredentialsGrant } from "./grants/client-credentials";
import { refreshTokenGrant } from "./grants/refresh-token";
import type { GrantHandler } from "./grants/types";

const registry = new Map<string, GrantHandler>([authorizationCodeGrant, refreshTokenGrant, clientCredentialsGrant].map((g) => [g.grantType, g]));

export function registerGrant(grant: GrantHandler): void {
  registry.set(grant.grantType, grant);
}

export const tokenEndpoint: Endpoint = async (request, ctx) => {
  const params = await readOAuthForm(request);
  const grantType = params.get("grant_type");
  if (!grantType) throw invalidRequest("grant_type is required");
  const grant = registry.get(grantType);
  if (!grant) throw unsupportedGrantType(`grant_type ${grantType} is not supported`);
  const client = await authenticateClient(request, params, ctx);
  // From here on a browser client may read the answer, errors included.
  try {
    for (const name of params.keys()) {
      if (!grant.parameters.has(name)) throw invalidRequest(`Parameter ${name} is not recognized for ${grantType}`);
    }
    return withCors(json(await grant.handle(params, client, ctx)), client.corsOrigin);
  } catch (error) {
    return withCors(errorToResponse(error), client.corsOrigin);
  }
};
