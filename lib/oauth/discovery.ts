import { and, desc, eq, ne } from "drizzle-orm";
import { apiGrants, apis, clients } from "../../db/schema";
import type { Endpoint, EndpointContext } from "../http/context";
import { publicDocument } from "./cors";
import { invalidRequest, notFound, unstorableText } from "./errors";
import { unstorableParameter } from "../http/form";
import { findClient, type ClientRow } from "./clients";
import { getPublicJwks } from "./keys";
import { GRANTS } from "./grants";
import { pushedRequestMetadata } from "./pushed-authorization/option";
import { DEVICE_AUTHORIZATION_PATH } from "./device-authorization/endpoint";
import { DPOP_ALGORITHMS } from "./dpop/algorithms";
import { cacheGeneration, cacheIfCurrent, workspaceCacheKey } from "../service";
import { buildDocument, documentResponse, DocumentShelf, isCurrent, type BuiltDocument } from "./documents";

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
  // Without a query (nearly every request) there is nothing to check: the same answer, unparsed.
  if (!request.url.includes("?")) return null;
  const query = new URL(request.url).searchParams;
  if (unstorableParameter(query) !== null) throw unstorableText();
  for (const name of query.keys()) {
    if (name !== "client_id") throw invalidRequest(`Parameter ${name} is not recognized`);
  }
  if (query.getAll("client_id").length > 1) throw invalidRequest("Parameter client_id is duplicated");
  return query.get("client_id");
}

/**
 * The discovery documents one workspace keeps built, one per issuer (each authentication
 * hostname has its own) and client_id asked for (or none): at most this many, the least recently
 * asked for out first. Only documents of active clients are kept (an unknown client_id is a 404,
 * never kept), so a stream of made-up client_ids adds nothing.
 */
export const DISCOVERY_DOCUMENTS_PER_WORKSPACE = 100;

/** Public and cacheable, but short: scope metadata follows client changes. */
const DISCOVERY_CACHE_CONTROL = "public, max-age=60";
/** Rotation pre-publishes the next key well ahead of use, so a 5-minute cache never misses a kid for long. */
const JWKS_CACHE_CONTROL = "public, max-age=300, must-revalidate";

function discoveryShelf(ctx: EndpointContext): DocumentShelf {
  const key = workspaceCacheKey("discovery", ctx.workspace.id);
  let shelf = ctx.service.cache.get(key) as DocumentShelf | undefined;
  if (!shelf) ctx.service.cache.set(key, (shelf = new DocumentShelf(DISCOVERY_DOCUMENTS_PER_WORKSPACE)));
  return shelf;
}

/** The shelf's key: the issuer (length-prefixed) and the client_id, or none. */
const discoveryKey = (issuer: string, clientId: string | null) => `${issuer.length}:${issuer}${clientId === null ? "" : `?${clientId}`}`;

/** Reads the database and builds the discovery document for `clientId` (null: the workspace's); throws 404 for an unknown or inactive client. */
async function buildDiscovery(ctx: EndpointContext, clientId: string | null): Promise<BuiltDocument> {
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
  return buildDocument(
    {
      issuer: iss,
      authorization_endpoint: `${iss}/oauth2/authorize`,
      token_endpoint: `${iss}/oauth2/token`,
      device_authorization_endpoint: `${iss}${DEVICE_AUTHORIZATION_PATH}`,
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
      dpop_signing_alg_values_supported: DPOP_ALGORITHMS,
      claims_supported: ["iss", "sub", "aud", "iat", "exp", "nonce", "auth_time", "acr", "amr", "sid", "organization_id", "connection_id", "email", "email_verified", "name"],
      authorization_response_iss_parameter_supported: true,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      claims_parameter_supported: false,
      ...pushedRequestMetadata(iss, clientId === null ? null : (client ?? null)),
    },
    DISCOVERY_CACHE_CONTROL,
  );
}

export const discoveryEndpoint: Endpoint = publicDocument(async (request, ctx) => {
  const clientId = documentClientId(request);
  const key = discoveryKey(ctx.issuer, clientId);
  let document = discoveryShelf(ctx).get(key, ctx.service);
  if (!document) {
    // Kept only if no change was heard of while it was read (it may predate the change).
    const generation = cacheGeneration(ctx.service);
    document = await buildDiscovery(ctx, clientId);
    if (cacheGeneration(ctx.service) === generation) discoveryShelf(ctx).set(key, document);
  }
  return documentResponse(request, document);
});

/** Reads the workspace's published keys and builds JWKS: out of date by itself when the first retired key leaves it. */
async function buildJwks(ctx: EndpointContext): Promise<BuiltDocument> {
  const { keys, unpublishedAt } = await getPublicJwks(ctx.service, ctx.workspace.id);
  return buildDocument({ keys }, JWKS_CACHE_CONTROL, unpublishedAt?.getTime() ?? Infinity);
}

export const jwksEndpoint: Endpoint = publicDocument(async (request, ctx) => {
  documentClientId(request);
  const key = workspaceCacheKey("jwks", ctx.workspace.id);
  let document = ctx.service.cache.get(key) as BuiltDocument | undefined;
  if (!document || !isCurrent(document, ctx.service)) {
    const generation = cacheGeneration(ctx.service);
    document = await buildJwks(ctx);
    cacheIfCurrent(ctx.service, generation, key, document);
  }
  return documentResponse(request, document);
});
