/**
 * How long a feature keeps its short-lived rows, declared beside the feature and run by the one
 * purger (lib/features' purge): the rows of `table` whose `expiresAt` column is more than `grace`
 * in the past are deleted in batches, on the instance holding the purge lease, optionally only
 * those `where` also selects (an enrolment never completed, an ended session). An expired row
 * answers exactly like a missing one everywhere, so deleting it changes no answer.
 */
import type { SQL } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";

export interface Retention {
  /** A short name, reported by the purge and its tests (`access_tokens`, `totp_enrolments`). */
  name: string;
  table: PgTable;
  /** The row's key, used to delete in batches. */
  key: PgColumn;
  /** The column whose time, plus `grace`, ends the row's life. */
  expiresAt: PgColumn;
  /** How long a row is kept past `expiresAt`, in milliseconds. */
  grace: number;
  /** The workspace column, so a test can purge one workspace (tests share one database). */
  workspaceId: PgColumn;
  /** Further conditions a row must meet to be deleted (evaluated at purge time). */
  where?: (now: Date) => SQL | undefined;
}

export const defineRetention = (r: Retention): Retention => r;
