/**
 * How long a feature keeps its short-lived rows, declared beside the feature and run by the one
 * purger (lib/features/purge.ts): the rows of `table` whose `expiresAt` time (plus `lifetime` when
 * that column is the row's creation), plus `grace`, is in the past are deleted in batches, on the
 * instance holding the purge lease, optionally only those `where` also selects (an enrolment never
 * completed). An expired row answers exactly like a missing one everywhere, so deleting it changes
 * no answer. docs/operations.md lists every declaration (tests/docs/operations-retention.test.ts).
 */
import type { SQL } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import { DAY, HOUR } from "../clock";
import type { Config } from "../config";

export interface Retention {
  /** A short name, reported by the purge and its tests (`access_tokens`, `totp_enrolments`). */
  name: string;
  table: PgTable;
  /** The row's key, used to delete in batches. */
  key: PgColumn;
  /**
   * The column whose time, plus `grace`, ends the row's life. Several: the row's life ends at the
   * first of them that has passed (a grant revoked, or past its idle or its absolute bound).
   */
  expiresAt: PgColumn | readonly PgColumn[];
  /**
   * When `expiresAt` is the row's creation rather than its expiry (an enrolment, an outbox
   * message): how long the row lives from it, counted before `grace`. None: `expiresAt` is the expiry.
   */
  lifetime?: number;
  /**
   * How long a row is kept past its end, in milliseconds; or a setting of the configuration
   * (null: every row is kept).
   */
  grace: number | ((config: Config) => number | null | undefined);
  /**
   * The workspace column, so a test can purge one workspace (tests share one database). None: the
   * rows belong to no workspace, and only a purge of every workspace deletes them.
   */
  workspaceId?: PgColumn;
  /** Further conditions a row must meet to be deleted (evaluated at purge time). */
  where?: (now: Date) => SQL | undefined;
}

export const defineRetention = (r: Retention): Retention => r;

/**
 * How long an expired short-lived row (a token, a code, a pending sign-in, a challenge) is kept past
 * its expiry: support and audit questions about a recent one can still be answered from the table.
 */
export const PURGE_GRACE_MS = HOUR;

/**
 * How long an ended grant, hosted session, handoff launch or operator invitation is kept: the
 * console's user page and the portal's "applications" list show recent ones, and support questions
 * about a recent sign-in can still be answered.
 */
export const ENDED_RETENTION_MS = 30 * DAY;
