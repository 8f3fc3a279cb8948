/**
 * The audit log as operators read it: console changes (who, what, when, from where) and the
 * protocol's security events (grant.revoked, refresh.reuse_detected flagged as possible token
 * theft, session.logout, sign_in.failed, …), newest first, filtered by actor, type, the audit
 * catalogue's group and time, paged by keyset; each with its one-line summary
 * (lib/audit/summary.ts, from lib/audit/catalogue.ts). The same filters export the events as JSON
 * lines.
 */
import { and, desc, eq, gte, inArray, isNotNull, isNull, like, lt, lte, or, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client";
import { auditEvents, grants, users } from "../../db/schema";
import { auditGroupTypes, isAuditGroup, type AuditGroup } from "../audit/catalogue";
import { summarizeAuditEvent } from "../audit/summary";
import { parseCookieHeader } from "../http/cookies";
import type { Service } from "../service";
import { ConsoleAccessError, CONSOLE_SESSION_COOKIE, requireWorkspaceRole } from "./authz";
import { normalizeEmail } from "../authn/email-address";

export const AUDIT_PAGE_SIZE = 50;
/** The actor filter's value for events no person caused (the protocol, the service). */
export const SYSTEM_ACTOR = "system";

export interface AuditFilter {
  /** An exact type, or a prefix ending in `*` such as `console.*`. */
  type?: string;
  /** A group of the audit catalogue: its event types. */
  group?: AuditGroup;
  /** An operator's or user's email, or `system` for protocol events (no actor). */
  actor?: string;
  from?: Date;
  to?: Date;
  flaggedOnly?: boolean;
  /** Cursor from the previous page: `<iso time>|<id>`. */
  before?: string;
}

export interface AuditEntry {
  id: string;
  type: string;
  actor: string | null;
  actorEmail: string | null;
  clientId: string | null;
  subject: string | null;
  /** The email of the user the event is about, when the row names one of this workspace's users. */
  subjectEmail: string | null;
  reason: string | null;
  flagged: string | null;
  data: Record<string, unknown>;
  ip: string | null;
  createdAt: Date;
  summary: string;
}

export interface AuditPage {
  entries: AuditEntry[];
  /** Cursor of the next (older) page, or null at the end. */
  next: string | null;
}

export function parseCursor(value: string | undefined): { at: Date; id: string } | null {
  if (!value) return null;
  const bar = value.indexOf("|");
  if (bar < 0) return null;
  const at = new Date(value.slice(0, bar));
  return Number.isNaN(at.getTime()) ? null : { at, id: value.slice(bar + 1) };
}

const actorUser = alias(users, "actor_user");
const escapeLike = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The conditions for a filter; null when it can match nothing (an actor nobody is). */
async function conditions(db: Database, workspaceId: string, filter: AuditFilter): Promise<SQL | null> {
  const type = filter.type?.trim();
  const actor = filter.actor?.trim().toLowerCase();
  let actorCondition: SQL | undefined;
  if (actor === SYSTEM_ACTOR) actorCondition = isNull(auditEvents.actor);
  else if (actor) {
    // Operators live in the system workspace, portal users in this one: an email may name either.
    const ids = (await db.select({ id: users.id }).from(users).where(eq(users.emailNormalized, normalizeEmail(actor) ?? actor)).limit(20)).map((r) => r.id);
    if (ids.length === 0) return null;
    actorCondition = inArray(auditEvents.actor, ids);
  }
  const cursor = parseCursor(filter.before);
  return and(
    eq(auditEvents.workspaceId, workspaceId),
    type ? (type.endsWith("*") ? like(auditEvents.type, `${escapeLike(type.slice(0, -1))}%`) : eq(auditEvents.type, type)) : undefined,
    filter.group ? inArray(auditEvents.type, auditGroupTypes(filter.group)) : undefined,
    actorCondition,
    filter.from ? gte(auditEvents.createdAt, filter.from) : undefined,
    filter.to ? lte(auditEvents.createdAt, filter.to) : undefined,
    filter.flaggedOnly ? isNotNull(auditEvents.flagged) : undefined,
    cursor ? or(lt(auditEvents.createdAt, cursor.at), and(eq(auditEvents.createdAt, cursor.at), lt(auditEvents.id, cursor.id))) : undefined,
  )!;
}

async function selectEvents(db: Database, workspaceId: string, filter: AuditFilter, limit: number): Promise<Omit<AuditEntry, "subjectEmail" | "summary">[]> {
  const where = await conditions(db, workspaceId, filter);
  if (!where) return [];
  const rows = await db
    .select({ event: auditEvents, actorEmail: actorUser.email })
    .from(auditEvents)
    .leftJoin(actorUser, eq(actorUser.id, auditEvents.actor))
    .where(where)
    .orderBy(desc(auditEvents.createdAt), desc(auditEvents.id))
    .limit(limit);
  return rows.map(({ event, actorEmail }) => ({ ...event, actorEmail: actorEmail ?? (typeof event.data.operator === "string" ? event.data.operator : null) }));
}

/**
 * The user each event is about, by email: its subject or `data.user_id` when either is a user of
 * this workspace, else the user of `data.grant_id` (refresh reuse, revocations). Two queries a page.
 */
async function withSubjects(db: Database, workspaceId: string, rows: Omit<AuditEntry, "subjectEmail" | "summary">[]): Promise<AuditEntry[]> {
  const str = (v: unknown) => (typeof v === "string" && v.length > 0 && v.length <= 100 ? v : null);
  const grantIds = [...new Set(rows.map((r) => str(r.data.grant_id)).filter((v): v is string => v !== null))];
  const grantUsers = new Map<string, string>();
  if (grantIds.length) {
    for (const g of await db.select({ id: grants.id, userId: grants.userId }).from(grants).where(and(eq(grants.workspaceId, workspaceId), inArray(grants.id, grantIds)))) grantUsers.set(g.id, g.userId);
  }
  const candidate = (r: (typeof rows)[number]) => [str(r.data.user_id), r.subject && r.subject.length <= 100 ? r.subject : null, grantUsers.get(str(r.data.grant_id) ?? "") ?? null];
  const userIds = [...new Set(rows.flatMap(candidate).filter((v): v is string => v !== null))];
  const emails = new Map<string, string>();
  if (userIds.length) {
    for (const u of await db.select({ id: users.id, email: users.email }).from(users).where(and(eq(users.workspaceId, workspaceId), inArray(users.id, userIds)))) emails.set(u.id, u.email);
  }
  return rows.map((r) => {
    const subjectEmail = candidate(r).map((id) => (id ? emails.get(id) : undefined)).find((e) => e !== undefined) ?? null;
    const entry = { ...r, subjectEmail };
    return { ...entry, summary: summarizeAuditEvent(entry) };
  });
}

export async function listAuditEvents(service: Service, workspaceId: string, filter: AuditFilter = {}): Promise<AuditPage> {
  const rows = await selectEvents(service.db, workspaceId, filter, AUDIT_PAGE_SIZE + 1);
  const page = rows.slice(0, AUDIT_PAGE_SIZE);
  const last = page[page.length - 1];
  return {
    entries: await withSubjects(service.db, workspaceId, page),
    next: rows.length > AUDIT_PAGE_SIZE && last ? `${last.createdAt.toISOString()}|${last.id}` : null,
  };
}

/** The people who appear as actors in this workspace's log (emails), for the actor filter. */
export async function auditActors(service: Service, workspaceId: string): Promise<string[]> {
  const rows = await service.db
    .selectDistinct({ email: actorUser.email })
    .from(auditEvents)
    .innerJoin(actorUser, eq(actorUser.id, auditEvents.actor))
    .where(eq(auditEvents.workspaceId, workspaceId))
    .orderBy(actorUser.email)
    .limit(200);
  return rows.map((r) => r.email);
}

/** The page's query string as a filter (the audit page and the export read the same names). */
export function auditFilterFromQuery(query: URLSearchParams): AuditFilter {
  const text = (name: string, max: number) => query.get(name)?.trim().slice(0, max) || undefined;
  const group = text("group", 100);
  return {
    type: text("type", 100),
    group: group && isAuditGroup(group) ? group : undefined,
    actor: text("actor", 320),
    from: parseUtc(query.get("from")),
    to: parseUtc(query.get("to")),
    flaggedOnly: query.get("flagged") === "1",
    before: text("before", 200),
  };
}

/** `datetime-local` values (`2026-01-31T09:30`) are read as UTC (the page says so). */
export function parseUtc(value: unknown): Date | undefined {
  if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(value)) return undefined;
  const d = new Date(`${value}:00Z`);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

const EXPORT_BATCH = 500;

/** One exported event: the stored row as JSON, with its summary and the emails resolved. */
function exportLine(e: AuditEntry): string {
  return `${JSON.stringify({
    id: e.id,
    time: e.createdAt.toISOString(),
    type: e.type,
    summary: e.summary,
    actor: e.actor,
    actor_email: e.actorEmail,
    subject: e.subject,
    subject_email: e.subjectEmail,
    client_id: e.clientId,
    reason: e.reason,
    flagged: e.flagged,
    ip: e.ip,
    data: e.data,
  })}\n`;
}

/** Every event matching `filter` (the cursor ignored), newest first, as JSON lines, read in batches. */
export function auditEventLines(service: Service, workspaceId: string, filter: AuditFilter, batch = EXPORT_BATCH): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let before: string | undefined;
  let done = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (done) return controller.close();
      const rows = await selectEvents(service.db, workspaceId, { ...filter, before }, batch);
      const entries = await withSubjects(service.db, workspaceId, rows);
      if (entries.length) controller.enqueue(encoder.encode(entries.map(exportLine).join("")));
      const last = rows[rows.length - 1];
      if (rows.length < batch || !last) done = true;
      else before = `${last.createdAt.toISOString()}|${last.id}`;
      if (done) controller.close();
    },
  });
}

/**
 * GET /console/w/<workspace>/audit/export: the filtered events as a JSON-lines download, for any
 * operator of the workspace (viewer or above). Without a session: 401; a workspace that is not
 * the operator's: 404, the same as one that does not exist.
 */
export async function auditExportEndpoint(request: Request, service: Service, workspaceId: string): Promise<Response> {
  const token = parseCookieHeader(request.headers.get("cookie")).get(CONSOLE_SESSION_COOKIE);
  let access;
  try {
    access = await requireWorkspaceRole(service, token, workspaceId, "viewer");
  } catch (error) {
    if (!(error instanceof ConsoleAccessError)) throw error;
    const status = error.code === "unauthenticated" ? 401 : 404;
    return new Response(status === 401 ? "Sign in to the console\n" : "Not found\n", { status, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } });
  }
  const filter = auditFilterFromQuery(new URL(request.url).searchParams);
  const stamp = service.clock.now().toISOString().slice(0, 19).replace(/[:T]/g, "-");
  return new Response(auditEventLines(service, access.workspace.id, { ...filter, before: undefined }), {
    status: 200,
    headers: {
      "content-type": "application/x-ndjson; charset=utf-8",
      "content-disposition": `attachment; filename="audit-${access.workspace.id}-${stamp}.jsonl"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}
