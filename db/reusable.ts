import { sql } from "drizzle-orm";
import type { Database } from "./client";

/** A statement's named value, given at each execution (`reusable`'s `values`). */
export const param = (name: string) => sql.placeholder(name);

interface Executable<R> {
  execute(values?: Record<string, unknown>): Promise<R>;
}

/** What a prepared query takes from the session that prepared it. */
interface SessionParts {
  client?: unknown;
  logger?: unknown;
  cache?: unknown;
}

type Bindable<R> = Executable<R> & SessionParts;

type Session = SessionParts & { constructor: unknown };

/**
 * A statement whose SQL is built once and then executed on any handle of the database: the root
 * handle or a transaction. drizzle builds a query's SQL text on every execution, and for the
 * multi-join statements of refresh rotation that costs more CPU than the round trip itself;
 * `.prepare()` keeps the build, but is bound to one handle, and every transaction has its own.
 * The prepared query is re-bound to the executing handle's own driver client, logger and cache
 * (postgres.js and PGlite sessions keep them as `client`, `logger`, `cache`), so it runs and logs
 * as if that handle had prepared it; anything else falls back to building the statement as usual.
 */
export function reusable<R>(name: string, build: (db: Database) => { prepare(name: string): Executable<R> }) {
  // One template per driver session class: tests may open PGlite and PostgreSQL in one process.
  const templates = new Map<unknown, Bindable<R>>();
  return (db: Database, values: Record<string, unknown>): Promise<R> => {
    const session = (db as unknown as { session?: Session }).session;
    const client = session?.client;
    if (!session || client === undefined) return build(db).prepare(name).execute(values);
    let template = templates.get(session.constructor);
    if (!template) {
      template = build(db).prepare(name) as Bindable<R>;
      if (!("client" in template)) return template.execute(values);
      templates.set(session.constructor, template);
    }
    const own: SessionParts = { client, logger: session.logger, cache: session.cache };
    const same = template.client === own.client && template.logger === own.logger && template.cache === own.cache;
    const bound: Bindable<R> = same ? template : Object.assign(Object.create(Object.getPrototypeOf(template) as object) as Bindable<R>, template, own);
    return bound.execute(values);
  };
}
