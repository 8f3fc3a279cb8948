/**
 * A directory's last requests, for its administrators (the console, the organization's admin
 * portal): method, path, status and a refusal's scimType and detail, never a body or a token.
 * Every request is one insert; every TRIM_EVERY-th of a directory in a process also deletes what
 * is older than the newest KEPT_REQUESTS (readers list only those), so concurrent requests do not
 * queue on deleting the same rows. The descriptor's retention removes the rest of a directory
 * nobody calls any more.
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

/** How many of a directory's requests a process logs between two trims. */
export const TRIM_EVERY = 50;
const sinceTrim = new Map<string, number>();

export async function logRequest(db: Database, entry: LoggedRequest): Promise<void> {
  const { workspaceId, directoryId } = entry;
  await db.insert(scimRequests).values({ id: newId(), workspaceId, directoryId, at: entry.at, method: entry.method, path: entry.path.slice(0, 300), status: entry.status, detail: entry.detail });
  const count = (sinceTrim.get(directoryId) ?? 0) + 1;
  if (count < TRIM_EVERY) {
    sinceTrim.set(directoryId, count);
    return;
  }
  sinceTrim.delete(directoryId);
  await db.execute(sql`delete from ${scimRequests} where ${scimRequests.workspaceId} = ${workspaceId} and ${scimRequests.directoryId} = ${directoryId}
    and ${scimRequests.at} < (select ${scimRequests.at} from ${scimRequests}
      where ${scimRequests.workspaceId} = ${workspaceId} and ${scimRequests.directoryId} = ${directoryId}
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
