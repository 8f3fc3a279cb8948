// The `apis` and `api_grants` sections as the workspace holds them, sorted by audience (grants by client_id, then audience).
import { eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { apiGrants, apis } from "../../../db/schema";
import type { WorkspaceDocument } from "../document";
import { byKey, namesById } from "./shared";

export async function exportApis(db: Database, wid: string): Promise<Pick<WorkspaceDocument, "apis">> {
  const rows = await db.select().from(apis).where(eq(apis.workspaceId, wid));
  return { apis: rows.sort(byKey((a) => a.audience)).map((a) => ({ audience: a.audience, name: a.name, active: a.active, permissions: a.permissions })) };
}

export async function exportApiGrants(db: Database, wid: string): Promise<Pick<WorkspaceDocument, "api_grants">> {
  const [rows, clientById, audienceById] = await Promise.all([db.select().from(apiGrants).where(eq(apiGrants.workspaceId, wid)), namesById.clients(db, wid), namesById.apis(db, wid)]);
  return {
    api_grants: rows
      .map((g) => ({ client_id: clientById.get(g.clientPk) as string, audience: audienceById.get(g.apiId) as string, permissions: g.permissions }))
      .sort(byKey((g) => `${g.client_id}\u0000${g.audience}`)),
  };
}
