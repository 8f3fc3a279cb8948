/**
 * The rule for what a user-facing authorization may ask for, written once: the authorization
 * request (./authorize.ts) and the device authorization request (./device-authorization) both read
 * `scope` and `resource` through it. `resource`, when sent, names an active API granted to the
 * client; `scope` is well formed, unique, at most MAX_AUTHORIZE_SCOPES values and includes
 * `openid`; each identity scope is registered for the client, each permission is granted to the
 * client for that resource (and needs one).
 */
import { and, eq } from "drizzle-orm";
import { apiGrants, apis } from "../../db/schema";
import type { EndpointContext } from "../http/context";
import type { ClientRow } from "./clients";
import { hasDuplicates, isIdentityScope, MAX_AUTHORIZE_SCOPES, splitScope } from "./scopes";

export interface RequestedScope {
  scope: string[];
  /** The API `resource` names, or null without one. */
  apiId: string | null;
}

/** Why the scope or resource is refused: the `invalid_scope` description, in each caller's own error shape. */
export class ScopeRefused extends Error {
  readonly error = "invalid_scope";
}

/** The requested scope and resource, checked in the order written above; throws ScopeRefused. */
export async function checkRequestedScope(ctx: EndpointContext, client: ClientRow, rawScope: string, resource: string | null): Promise<RequestedScope> {
  let apiId: string | null = null;
  let grantedPermissions: Set<string> = new Set();
  if (resource !== null) {
    const [row] = await ctx.service.db
      .select({ apiId: apis.id, permissions: apiGrants.permissions })
      .from(apiGrants)
      .innerJoin(apis, eq(apis.id, apiGrants.apiId))
      .where(and(eq(apiGrants.workspaceId, ctx.workspace.id), eq(apiGrants.clientPk, client.id), eq(apis.audience, resource), eq(apis.active, true)))
      .limit(1);
    if (!row) throw new ScopeRefused("resource is not an active API granted to this client");
    apiId = row.apiId;
    grantedPermissions = new Set(row.permissions);
  }
  const scope = splitScope(rawScope);
  if (!scope) throw new ScopeRefused("scope is malformed");
  if (hasDuplicates(scope)) throw new ScopeRefused("scope values must be unique");
  if (scope.length > MAX_AUTHORIZE_SCOPES) throw new ScopeRefused(`At most ${MAX_AUTHORIZE_SCOPES} scopes may be requested`);
  if (!scope.includes("openid")) throw new ScopeRefused("scope must include openid");
  for (const s of scope) {
    if (isIdentityScope(s)) {
      if (!client.identityScopes.includes(s)) throw new ScopeRefused(`Scope ${s} is not registered for this client`);
    } else if (!grantedPermissions.has(s)) {
      throw new ScopeRefused(resource === null ? `Scope ${s} requires a resource` : `Scope ${s} is not permitted for this client and resource`);
    }
  }
  return { scope, apiId };
}
