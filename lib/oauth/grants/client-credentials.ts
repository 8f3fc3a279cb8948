import { and, eq, sql } from "drizzle-orm";
import { secretActiveSql } from "../../authority";
import { param, reusable } from "../../../db/reusable";
import { apiGrants, apis, clients, clientSecrets } from "../../../db/schema";
import { addMs } from "../../clock";
import type { EndpointContext } from "../../http/context";
import { invalidGrant, invalidRequest, invalidScope } from "../errors";
import { checksCredentialLiveness, type AuthenticatedClient } from "../clients";
import { ACCESS_TOKEN_TTL_MS } from "../issue";
import { newWorkloadTokenId, sealWorkloadToken } from "../workload-token";
import { hasDuplicates, isIdentityScope, MAX_M2M_SCOPES, splitScope } from "../scopes";
import type { GrantHandler } from "./types";

/**
 * The authority a workload token is sealed with (lib/oauth/workload-token.ts), built and prepared
 * once: a read, never a write. It is also the liveness check of a memoized credential: no row
 * unless the secret is unrevoked and unexpired, its client is still an active M2M client with
 * this client_id, and the resource is an active API whose grant to the client and whose
 * definition both include every requested permission.
 */
const authorityStatement = reusable("latchkey_workload_token_authority", (db) =>
  db
    .select({ apiId: apis.id })
    .from(clientSecrets)
    .innerJoin(clients, and(eq(clients.id, clientSecrets.clientPk), eq(clients.workspaceId, clientSecrets.workspaceId)))
    .innerJoin(apiGrants, and(eq(apiGrants.workspaceId, clientSecrets.workspaceId), eq(apiGrants.clientPk, clientSecrets.clientPk)))
    .innerJoin(apis, eq(apis.id, apiGrants.apiId))
    .where(
      and(
        eq(clientSecrets.workspaceId, param("workspaceId")),
        eq(clientSecrets.id, param("credentialId")),
        eq(clientSecrets.clientPk, param("clientPk")),
        secretActiveSql(clientSecrets, sql`${param("now")}::timestamptz`),
        eq(clients.active, true),
        eq(clients.type, "M2M"),
        eq(clients.clientId, param("clientId")),
        eq(apis.audience, param("resource")),
        eq(apis.active, true),
        sql`${apiGrants.permissions} @> ${param("scope")}::jsonb`,
        sql`${apis.permissions} @> ${param("scope")}::jsonb`,
      ),
    )
    .limit(1),
);

interface WorkloadRequest {
  resource: string;
  scope: string[];
}

/** The request's own rules, checked before any statement, in the order they are written. */
function readRequest(params: Map<string, string>, { credentialId, method }: AuthenticatedClient): WorkloadRequest {
  // authenticateClient only lets an M2M client through with Basic; keep the rule local anyway.
  if (method !== "client_secret_basic" || !credentialId) throw invalidRequest("client_credentials requires HTTP Basic client authentication");
  const resource = params.get("resource");
  if (!resource) throw invalidRequest("resource is required");
  const raw = params.get("scope");
  if (raw === undefined) throw invalidScope("scope is required: 1 to 64 permissions of the resource");
  const scope = splitScope(raw);
  if (!scope) throw invalidScope("scope is malformed");
  if (hasDuplicates(scope)) throw invalidScope("scope values must be unique");
  if (scope.length > MAX_M2M_SCOPES) throw invalidScope(`At most ${MAX_M2M_SCOPES} permissions may be requested`);
  const identity = scope.find(isIdentityScope);
  if (identity) throw invalidScope(`Identity scope ${identity} cannot be requested by a machine-to-machine client`);
  return { resource, scope };
}

/**
 * Hot path, one read and no write: the token is sealed only while the credential and its client
 * are still active (a secret revoked since authentication, by a concurrent rotation, yields no
 * token rather than one dead on arrival) and the resource is an active API whose grant to this
 * client and whose definition both include every requested permission. Null when they are not.
 */
async function issue(ctx: EndpointContext, { client, credentialId }: AuthenticatedClient, { resource, scope }: WorkloadRequest) {
  const now = ctx.service.clock.now();
  const [authority] = await authorityStatement(ctx.service.db, {
    workspaceId: ctx.workspace.id,
    credentialId,
    clientPk: client.id,
    clientId: client.clientId,
    scope: JSON.stringify(scope),
    resource,
    now: now.toISOString(),
  });
  if (!authority) return null;
  const token = sealWorkloadToken(ctx.service.config.masterKey, ctx.workspace.id, ctx.hostname, {
    id: newWorkloadTokenId(),
    clientPk: client.id,
    credentialId: credentialId!,
    apiId: authority.apiId,
    scope,
    issuedAt: now,
    expiresAt: addMs(now, ACCESS_TOKEN_TTL_MS),
  });
  return { access_token: token, token_type: "Bearer", expires_in: ACCESS_TOKEN_TTL_MS / 1000, scope: scope.join(" ") };
}

async function issueOrExplain(params: Map<string, string>, authenticated: AuthenticatedClient, ctx: EndpointContext) {
  const request = readRequest(params, authenticated);
  const issued = await issue(ctx, authenticated, request);
  if (issued) return issued;
  // Nothing issued: say why, checking in the order the rules are written.
  const { client } = authenticated;
  const { resource, scope } = request;
  const [grant] = await ctx.service.db
    .select({ apiId: apis.id, granted: apiGrants.permissions, defined: apis.permissions })
    .from(apiGrants)
    .innerJoin(apis, eq(apis.id, apiGrants.apiId))
    .where(and(eq(apiGrants.workspaceId, ctx.workspace.id), eq(apiGrants.clientPk, client.id), eq(apis.audience, resource), eq(apis.active, true)))
    .limit(1);
  if (!grant) throw invalidScope("resource is not an active API granted to this client");
  const granted = new Set(grant.granted);
  const defined = new Set(grant.defined);
  const refused = scope.find((p) => !granted.has(p) || !defined.has(p));
  if (refused !== undefined) throw invalidScope(`Permission ${refused} is not granted to this client for this resource`);
  throw invalidGrant("The client credential is no longer active");
}

/**
 * grant_type=client_credentials (SPEC.md "M2M"): M2M clients only, HTTP Basic only; `resource`
 * names an active API granted to the client and `scope` lists 1–64 unique permissions that the
 * grant permits. The scope is granted exactly as asked or refused with invalid_scope: never
 * broadened, never silently narrowed. The token is bound to the secret that obtained it, and its
 * subject is the client_id. No refresh token, no ID token.
 *
 * With a memoized credential (`unconfirmed`), the authority read is the request's only statement. Any
 * refusal, and a read of nothing, is answered only after a full authentication, so a secret or
 * client that is no longer live gets invalid_client, and every other error is the same as ever.
 */
export const clientCredentialsGrant: GrantHandler = {
  grantType: "client_credentials",
  parameters: new Set(["grant_type", "resource", "scope", "client_id"]),
  clients: { types: new Set(["M2M"]), refusal: "Only machine-to-machine clients can use the client_credentials grant" },
  async handle(params, authenticated, ctx) {
    const { unconfirmed } = authenticated;
    if (!unconfirmed) return issueOrExplain(params, authenticated, ctx);
    let request: WorkloadRequest | null = null;
    try {
      request = readRequest(params, authenticated);
    } catch {
      // Answered below, once the credential is known to be live.
    }
    const issued = request && (await issue(ctx, authenticated, request));
    if (issued) {
      // Concurrent requests may have used up the client's budget since it was checked (429): the
      // token sealed above is then never disclosed (nothing was stored).
      unconfirmed.confirm();
      return issued;
    }
    return issueOrExplain(params, await unconfirmed.authenticate(), ctx);
  },
};

checksCredentialLiveness(clientCredentialsGrant.grantType, clientCredentialsGrant.parameters);
