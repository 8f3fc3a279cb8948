/**
 * A directory's last requests, for its administrators (the console, the organization's admin
 * portal): method, path, status and a refusal's scimType and detail, never a body or a token. Each
 * request keeps the newest KEPT_REQUESTS and deletes what is older, in one statement; the
 * descriptor's retention removes the rest of a directory nobody calls any more.
 */
import { and, desc, eq, sql } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { scimRequests } from "../../../db/schema";
import { newId } from "../../crypto";

export const KEPT_REQUESTS = 100;

export interface LoggedRequest {
  workspaceId: string;
  directoryId: string;
  at: Date;
  method: string;
  path: string;
  status: number;
  detail: string | null;
}

export async function logRequest(db: Database, entry: LoggedRequest): Promise<void> {
  const path = entry.path.slice(0, 300);
  // The insert and the trim in one round trip; the trim sees the rows before this one, so at most KEPT_REQUESTS + 1 remain.
  await db.execute(sql`with logged as (
      insert into ${scimRequests} (id, workspace_id, directory_id, at, method, path, status, detail)
      values (${newId()}, ${entry.workspaceId}, ${entry.directoryId}, ${entry.at.toISOString()}::timestamptz, ${entry.method}, ${path}, ${entry.status}, ${entry.detail})
    )
    delete from ${scimRequests} where ${scimRequests.workspaceId} = ${entry.workspaceId} and ${scimRequests.directoryId} = ${entry.directoryId}
      and ${scimRequests.at} < (select ${scimRequests.at} from ${scimRequests}
        where ${scimRequests.workspaceId} = ${entry.workspaceId} and ${scimRequests.directoryId} = ${entry.directoryId}
        order by ${scimRequests.at} desc offset ${KEPT_REQUESTS - 1} limit 1)`);
}

export async function recentRequests(db: Database, workspaceId: string, directoryId: string) {
  return db
    .select({ at: scimRequests.at, method: scimRequests.method, path: scimRequests.path, status: scimRequests.status, detail: scimRequests.detail })
    .from(scimRequests)
    .where(and(eq(scimRequests.workspaceId, workspaceId), eq(scimRequests.directoryId, directoryId)))
    .orderBy(desc(scimRequests.at), desc(scimRequests.id))
    .limit(KEPT_REQUESTS);
}
