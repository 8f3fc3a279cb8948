// API grants of clients: listing them, setting a grant's permissions and withdrawing a grant.
import { and, asc, eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { apiGrants, apis, clients } from "../../../db/schema";
import { newId } from "../../crypto";
import { audit, type Change } from "./change";
import { checkPermissions, findApi, findClientPk } from "./lookups";

export interface ApiGrantInfo {
  clientId: string;
  clientName: string;
  clientType: "PUBLIC" | "WEB_CONFIDENTIAL" | "M2M";
  audience: string;
  apiName: string;
  apiActive: boolean;
  /** Interactive clients: what they may request for users. M2M clients: what they may obtain. */
  permissions: string[];
}

/** API grants of the workspace, optionally of one client or one API; sorted by client, then audience. */
export async function listApiGrants(db: Database, workspaceId: string, filter: { clientId?: string; audience?: string } = {}): Promise<ApiGrantInfo[]> {
  return db
    .select({
      clientId: clients.clientId,
      clientName: clients.name,
      clientType: clients.type,
      audience: apis.audience,
      apiName: apis.name,
      apiActive: apis.active,
      permissions: apiGrants.permissions,
    })
    .from(apiGrants)
    .innerJoin(clients, eq(clients.id, apiGrants.clientPk))
    .innerJoin(apis, eq(apis.id, apiGrants.apiId))
    .where(
      and(
        eq(apiGrants.workspaceId, workspaceId),
        filter.clientId === undefined ? undefined : eq(clients.clientId, filter.clientId),
        filter.audience === undefined ? undefined : eq(apis.audience, filter.audience),
      ),
    )
    .orderBy(asc(clients.clientId), asc(apis.audience));
}

/**
 * Grants an API to a client with exactly these permissions (each defined on the API), creating
 * the grant or replacing its permissions. An empty list keeps the grant without permissions.
 */
export async function setApiGrant(db: Database, change: Change & { clientId: string; audience: string; permissions: string[] }): Promise<void> {
  const { workspaceId } = change;
  const clientPk = await findClientPk(db, workspaceId, change.clientId);
  const api = await findApi(db, workspaceId, change.audience);
  const permissions = checkPermissions(api, change.permissions);
  const now = change.clock.now();
  await db
    .insert(apiGrants)
    .values({ id: newId(), workspaceId, clientPk, apiId: api.id, permissions, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: [apiGrants.workspaceId, apiGrants.clientPk, apiGrants.apiId], set: { permissions, updatedAt: now } });
  await audit(db, change, "authz.api_grant.set", { client_id: change.clientId, audience: change.audience, permissions });
}

/** Withdraws a client's grant of an API. Returns whether one was removed. */
export async function removeApiGrant(db: Database, change: Change & { clientId: string; audience: string }): Promise<boolean> {
  const { workspaceId } = change;
  const clientPk = await findClientPk(db, workspaceId, change.clientId);
  const api = await findApi(db, workspaceId, change.audience);
  const removed = await db
    .delete(apiGrants)
    .where(and(eq(apiGrants.workspaceId, workspaceId), eq(apiGrants.clientPk, clientPk), eq(apiGrants.apiId, api.id)))
    .returning({ id: apiGrants.id });
  if (removed.length > 0) await audit(db, change, "authz.api_grant.removed", { client_id: change.clientId, audience: change.audience });
  return removed.length > 0;
}
