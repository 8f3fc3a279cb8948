/**
 * How an account an organization's directory created signs in: only through the organization's
 * connection, unless the directory allows local sign-in too. The hosted sign-in asks this of every
 * first factor that is not a sign-in through a connection (lib/sign-in/flow.ts `identify`), so a
 * password, an email code, a passkey or a social provider does not open it. An account the
 * directory did not create keeps its own ways to sign in.
 */
import { and, eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { scimDirectories, scimUsers } from "../../../db/schema";

/** Whether `userId` may sign in only through a connection (an enabled directory created it and does not allow local sign-in). */
export async function signsInOnlyThroughConnection(db: Database, workspaceId: string, userId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: scimUsers.id })
    .from(scimUsers)
    .innerJoin(scimDirectories, eq(scimDirectories.id, scimUsers.directoryId))
    .where(and(eq(scimUsers.workspaceId, workspaceId), eq(scimUsers.userId, userId), eq(scimUsers.managed, true), eq(scimDirectories.enabled, true), eq(scimDirectories.localSignIn, false)))
    .limit(1);
  return row !== undefined;
}
