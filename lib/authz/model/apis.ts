// APIs and the permissions they define: listing them, and replacing an API's permissions (with their removal from grants and roles).
import { and, asc, eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { apiGrants, apis, rolePermissions } from "../../../db/schema";
import { isIdentityScope } from "../../oauth/scopes";
import { audit, type Change } from "./change";
import { AuthzModelError } from "./errors";
import { findApi } from "./lookups";

export interface ApiInfo {
  id: string;
  audience: string;
  name: string;
  active: boolean;
  permissions: string[];
}

export async function listApis(db: Database, workspaceId: string): Promise<ApiInfo[]> {
  return db
    .select({ id: apis.id, audience: apis.audience, name: apis.name, active: apis.active, permissions: apis.permissions })
    .from(apis)
    .where(eq(apis.workspaceId, workspaceId))
    .orderBy(asc(apis.audience));
}

/**
 * Replaces the permissions an API defines. A permission dropped from the API is dropped from every
 * grant and role of that API too (as the workspace import does), so nothing keeps a permission
 * that no longer exists.
 */
export async function setApiPermissions(db: Database, change: Change & { audience: string; permissions: string[] }): Promise<void> {
  const { workspaceId } = change;
  const seen = new Set<string>();
  for (const p of change.permissions) {
    if (typeof p !== "string" || !/^[A-Za-z0-9:._-]{1,64}$/.test(p) || isIdentityScope(p)) {
      throw new AuthzModelError("invalid_argument", `${JSON.stringify(p)} is not a valid permission name (1–64 of A–Z a–z 0–9 : . _ -, not an identity scope)`);
    }
    if (seen.has(p)) throw new AuthzModelError("invalid_argument", `Permission ${JSON.stringify(p)} is listed twice`);
    seen.add(p);
  }
  await db.transaction(async (tx) => {
    const api = await findApi(tx, workspaceId, change.audience);
    const now = change.clock.now();
    await tx.update(apis).set({ permissions: change.permissions, updatedAt: now }).where(eq(apis.id, api.id));
    const grantRows = await tx.select().from(apiGrants).where(and(eq(apiGrants.workspaceId, workspaceId), eq(apiGrants.apiId, api.id)));
    for (const row of grantRows) {
      const kept = row.permissions.filter((p) => seen.has(p));
      if (kept.length !== row.permissions.length) await tx.update(apiGrants).set({ permissions: kept, updatedAt: now }).where(eq(apiGrants.id, row.id));
    }
    const roleRows = await tx.select().from(rolePermissions).where(and(eq(rolePermissions.workspaceId, workspaceId), eq(rolePermissions.apiId, api.id)));
    for (const row of roleRows) {
      const kept = row.permissions.filter((p) => seen.has(p));
      if (kept.length !== row.permissions.length) await tx.update(rolePermissions).set({ permissions: kept }).where(eq(rolePermissions.id, row.id));
    }
    await audit(tx, change, "authz.api.permissions_set", { audience: change.audience, permissions: change.permissions });
  });
}
