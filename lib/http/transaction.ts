import type { Database } from "../../db/client";
import type { EndpointContext } from "./context";
import { RuleError } from "./errors";

/**
 * Runs `work` in one database transaction with a context whose queries use it.
 * - A dependency failure half-way (a lost connection) rolls everything back, so a one-time
 *   proof is never consumed without its result being recorded, and a retry is not "reuse".
 * - A rule failure (a `RuleError`, such as `OAuthError`) commits what was decided before it (a replayed code's grant
 *   revoked, a reused family ended) and is rethrown after the commit.
 */
export async function inTransaction<T>(ctx: EndpointContext, work: (tx: EndpointContext) => Promise<T>): Promise<T> {
  const outcome = await ctx.service.db.transaction(async (db) => {
    try {
      return { ok: true as const, value: await work({ ...ctx, service: { ...ctx.service, db: db as unknown as Database } }) };
    } catch (error) {
      if (error instanceof RuleError) return { ok: false as const, error };
      throw error;
    }
  });
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}
