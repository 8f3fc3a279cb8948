import { and, eq, inArray, lt } from "drizzle-orm";
import { accessTokens } from "../../db/schema";
import type { Service } from "../service";
import { HOUR, MINUTE } from "../clock";

/**
 * Expired access tokens are deleted in the background. An access token lives 5 minutes, and a
 * token that has expired answers exactly like an unknown one everywhere (introspection
 * `active: false`, 401 from UserInfo, the session check and the permission check, 200 from
 * revocation), so its row only costs: without this the hottest table and its indexes grow by
 * every token ever issued, and every insert and lookup with them.
 *
 * Rows are kept for an hour past expiry (support and audit questions about a recent token can
 * still be answered from the table), deleted in batches so no statement holds many row locks,
 * and rows another instance is deleting are skipped rather than waited for.
 */
export const PURGE_GRACE_MS = HOUR;
export const PURGE_INTERVAL_MS = 5 * MINUTE;
const BATCH = 5_000;
/** Per run; the rest waits for the next run rather than keeping the database busy. */
const MAX_BATCHES = 20;

/** Deletes the expired rows (of one workspace when given: tests share one database between files). */
export async function purgeExpiredAccessTokens(service: Service, options: { workspaceId?: string } = {}): Promise<number> {
  const cutoff = new Date(service.clock.now().getTime() - PURGE_GRACE_MS);
  const expired = lt(accessTokens.expiresAt, cutoff);
  const where = options.workspaceId === undefined ? expired : and(expired, eq(accessTokens.workspaceId, options.workspaceId));
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const batch = service.db.select({ tokenHash: accessTokens.tokenHash }).from(accessTokens).where(where).limit(BATCH).for("update", { skipLocked: true });
    const deleted = await service.db.delete(accessTokens).where(inArray(accessTokens.tokenHash, batch)).returning({ tokenHash: accessTokens.tokenHash });
    total += deleted.length;
    if (deleted.length < BATCH) break;
  }
  return total;
}

/** Runs the purge every PURGE_INTERVAL_MS (first run after one interval); stop with the returned function. */
export function startAccessTokenPurge(service: Service): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    purgeExpiredAccessTokens(service)
      .catch((error: Error) => console.warn(`[latchkey] expired access token purge failed (retried in ${PURGE_INTERVAL_MS / MINUTE} min): ${error.message}`))
      .finally(() => {
        running = false;
      });
  }, PURGE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
