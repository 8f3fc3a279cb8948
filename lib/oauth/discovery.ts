import { and, desc, eq, ne } from "drizzle-orm";
import { apiGrants, apis, clients } from "../../db/schema";
import type { Endpoint, EndpointContext } from "../http/context";
import { publicDocument } from "./cors";
import { json } from "../http/errors";
import { invalidRequest, notFound, unstorableText } from "./errors";
import { unstorableParameter } from "../http/form";
import { findClient, type ClientRow } from "./clients";
import { getPublicJwks } from "./keys";
import { GRANTS } from "./grants";

/** Scopes a client can request: its identity scopes plus the permissions of its granted, active APIs. */
export async function scopesForClient(ctx: EndpointContext, client: ClientRow): Promise<string[]> {
  const granted = await ctx.service.db
    .select({ permissions: apiGrants.permissions })
    .from(apiGrants)
    .innerJoin(apis, eq(apis.id, apiGrants.apiId))
    .where(and(eq(apiGrants.workspaceId, ctx.workspace.id), eq(apiGrants.clientPk, client.id), eq(apis.active, true)));
  const scopes = new Set<string>(client.identityScopes);
  for (const g of granted) for (const p of g.permissions) scopes.add(p);
  return [...scopes].sort();
}

/** The public documents' query: an optional client_id, once, and nothing else. */
function documentClientId(request: Request): string | null {
  const query = new URL(request.url).searchParams;
  if (unstorableParameter(query) !== null) throw unstorableText();
  for (const name of query.keys()) {
    if (name !== "client_id") throw invalidRequest(`Parameter ${name} is not recognized`);
  }
  if (query.getAll("client_id").length > 1) throw invalidRequest("Parameter client_id is duplicated");
  return query.get("client_id");
}

export const discoveryEndpoint: Endpoint = publicDocument(async (request, ctx) => {
  const clientId = documentClientId(request);
  let client: ClientRow | undefined;
  if (clientId !== null) {
    client = await findClient(ctx, clientId);
    if (!client || !client.active) throw notFound();
  } else {
    [client] = await ctx.service.db
      .select()
      .from(clients)
      .where(and(eq(clients.workspaceId, ctx.workspace.id), eq(clients.active, true), ne(clients.type, "M2M")))
      .orderBy(desc(clients.updatedAt))
      .limit(1);
  }
  const scopes = client ? await scopesForClient(ctx, client) : ["openid"];
  const iss = ctx.issuer;
  return json(
    {
      issuer: iss,
      authorization_endpoint: `${iss}/oauth2/authorize`,
      token_endpoint: `${iss}/oauth2/token`,
      userinfo_endpoint: `${iss}/oidc/userinfo`,
      jwks_uri: `${iss}/.well-known/jwks.json`,
      end_session_endpoint: `${iss}/oidc/logout`,
      revocation_endpoint: `${iss}/oauth2/revoke`,
      introspection_endpoint: `${iss}/oauth2/introspect`,
      scopes_supported: scopes,
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: [...GRANTS.keys()],
      subject_types_supported: ["pairwise"],
      id_token_signing_alg_values_supported: ["ES256"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "none"],
      revocation_endpoint_auth_methods_supported: ["client_secret_basic", "none"],
      introspection_endpoint_auth_methods_supported: ["client_secret_basic"],
      code_challenge_methods_supported: ["S256"],
      claims_supported: ["iss", "sub", "aud", "iat", "exp", "nonce", "auth_time", "acr", "amr", "sid", "organization_id", "connection_id", "email", "email_verified", "name"],
      authorization_response_iss_parameter_supported: true,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      claims_parameter_supported: false,
    },
    200,
    // Public and cacheable, but short: scope metadata follows client changes.
    { "Cache-Control": "public, max-age=60" },
  );
});

export const jwksEndpoint: Endpoint = publicDocument(async (request, ctx) => {
  documentClientId(request);
  const keys = await getPublicJwks(ctx.service, ctx.workspace.id);
  // Rotation pre-publishes the next key well ahead of use, so a 5-minute cache never misses a kid for long.
  return json({ keys }, 200, { "Cache-Control": "public, max-age=300, must-revalidate" });
});
