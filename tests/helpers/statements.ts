/**
 * What a piece of work asks the database: the SQL text of every statement the database handle runs
 * while `work` runs, in order (drizzle's logger sees each execution, prepared or built once), for
 * the tests that count statements or compare two flows' statements.
 */
import type { Database } from "../../db/client";

interface Logger {
  logQuery(query: string, params: unknown[]): void;
}

export async function statementsDuring<T>(db: Database, work: () => Promise<T>): Promise<{ value: T; statements: string[] }> {
  const logger = (db as unknown as { session: { logger: Logger } }).session.logger;
  const original = logger.logQuery;
  const statements: string[] = [];
  logger.logQuery = function (this: Logger, query: string, params: unknown[]) {
    statements.push(query);
    return original.call(this, query, params);
  };
  try {
    return { value: await work(), statements };
  } finally {
    logger.logQuery = original;
  }
}
