import type { Endpoint } from "../http/context";
import { invalidRequest, json, unsupportedGrantType } from "../http/errors";
import { readOAuthForm } from "../http/form";
import { authenticateClient } from "./clients";
import { authorizationCodeGrant } from "./grants/authorization-code";
import { refreshTokenGrant } from "./grants/refresh-token";
import type { GrantHandler } from "./grants/types";

const registry = new Map<string, GrantHandler>([authorizationCodeGrant, refreshTokenGrant].map((g) => [g.grantType, g]));

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
  for (const name of params.keys()) {
    if (!grant.parameters.has(name)) throw invalidRequest(`Parameter ${name} is not recognized for ${grantType}`);
  }
  return json(await grant.handle(params, client, ctx));
};
