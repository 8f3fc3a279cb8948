// Liveness and readiness for load balancers and orchestrators: `/healthz` (the process answers)
// and `/readyz` (the database answers, takes writes, and carries every migration this build
// expects: a standby after failover or a read-only database is not ready). Both sit
// outside the issuer paths, need no credentials and are answered by the listener before Next.
import { readFileSync } from "node:fs";
import path from "node:path";
import type { IncomingMessage, ServerResponse } from "node:http";
import { sql } from "drizzle-orm";
import { migrationsFolder, renewConnections, type Database } from "../../db/client";

export const HEALTH_PATHS = new Set(["/healthz", "/readyz"]);

export type ReadyState = "ready" | "database unreachable" | "database read-only" | "migrations pending" | "shutting down";

export interface ReadinessProbe {
  /** The current state; concurrent callers share one database round trip, and a result is reused briefly. */
  check(): Promise<ReadyState>;
  /** From now on the answer is "shutting down", so balancers stop sending new work while requests drain. */
  drain(): void;
}

/** The `when` stamps of the migrations this build ships (drizzle records them as `created_at`). */
export function expectedMigrations(folder = migrationsFolder): number[] {
  const journal = JSON.parse(readFileSync(path.join(/*turbopackIgnore: true*/ folder, "meta", "_journal.json"), "utf8")) as { entries: { when: number }[] };
  return journal.entries.map((entry) => entry.when);
}

export interface ReadinessOptions {
  /** Migration stamps that must be recorded as applied (default: this build's journal). */
  expected?: number[];
  /** A database that does not answer within this long counts as unreachable. */
  timeoutMs?: number;
  /** A result is reused for this long, so a flood of probes costs at most one query per interval. */
  cacheMs?: number;
}

export function readinessProbe(db: Database, options: ReadinessOptions = {}): ReadinessProbe {
  const timeoutMs = options.timeoutMs ?? 2000;
  const cacheMs = options.cacheMs ?? 1000;
  let expected = options.expected;
  let draining = false;
  let inFlight: Promise<ReadyState> | null = null;
  let last: { state: ReadyState; at: number } | null = null;

  async function query(): Promise<ReadyState> {
    expected ??= expectedMigrations();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    try {
      // One round trip: whether this session can write (a hot standby, or a database or role set
      // to default_transaction_read_only, reports transaction_read_only = on) and the migrations.
      const answer = await Promise.race([
        db
          .execute(
            sql`select current_setting('transaction_read_only') = 'on' or pg_is_in_recovery() as read_only, (select json_agg(created_at::text) from drizzle.__drizzle_migrations) as applied`,
          )
          .then((result) => {
            // postgres.js returns the rows; PGlite returns { rows }.
            const [row] = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { read_only: boolean; applied: string[] | null }[];
            return { readOnly: row?.read_only === true, applied: new Set((row?.applied ?? []).map(Number)) };
          }),
        timeout,
      ]);
      if (answer === "timeout") return "database unreachable";
      if (answer.readOnly) {
        // This session's settings date from when it connected: the next check asks a new one
        // (after a failover, or once default_transaction_read_only is reset, that one can write).
        renewConnections(db);
        return "database read-only";
      }
      return expected.every((when) => answer.applied.has(when)) ? "ready" : "migrations pending";
    } catch (error) {
      // A missing migrations table means nothing was migrated; anything else is an outage.
      return undefinedTable(error) ? "migrations pending" : "database unreachable";
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async check() {
      if (draining) return "shutting down";
      if (last && Date.now() - last.at < cacheMs) return last.state;
      inFlight ??= query().then((state) => {
        last = { state, at: Date.now() };
        inFlight = null;
        return state;
      });
      return draining ? "shutting down" : inFlight;
    },
    drain() {
      draining = true;
    },
  };
}

/** PostgreSQL's undefined_table (42P01), on the error or on the driver error drizzle wraps. */
function undefinedTable(error: unknown): boolean {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 3; e = e.cause as typeof e, depth++) {
    if (e.code === "42P01") return true;
  }
  return false;
}

function write(res: ServerResponse, status: number, body: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, {
    "content-type": "text/plain; charset=utf-8",
    "content-length": String(Buffer.byteLength(body)),
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    ...extra,
  });
  // Node drops the body of an answer to HEAD and keeps the headers.
  res.end(body);
}

/** Answers `/healthz` or `/readyz` (the caller checked the path). */
export async function answerHealth(req: IncomingMessage, res: ServerResponse, pathname: string, probe: ReadinessProbe): Promise<void> {
  const method = req.method ?? "GET";
  if (method !== "GET" && method !== "HEAD") return write(res, 405, "method not allowed\n", { allow: "GET, HEAD" });
  if (pathname === "/healthz") return write(res, 200, "ok\n");
  const state = await probe.check();
  if (state === "ready") return write(res, 200, "ready\n");
  write(res, 503, `${state}\n`, { "retry-after": "5" });
}
