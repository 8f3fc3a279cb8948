/**
 * The audit log as operators read it: console changes (who, what, when, from where) and the
 * protocol's security events (grant.revoked, refresh.reuse_detected flagged as possible token
 * theft, session.logout, …), newest first, filtered by type and time, paged by keyset.
 */
import { and, desc, eq, gte, isNotNull, like, lt, lte, or, sql } from "drizzle-orm";
import { auditEvents, users } from "../../db/schema";
import type { Service } from "../service";

export const AUDIT_PAGE_SIZE = 50;

export interface AuditFilter {
  /** An exact type, or a prefix ending in `*` such as `console.*`. */
  type?: string;
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
  reason: string | null;
  flagged: string | null;
  data: Record<string, unknown>;
  ip: string | null;
  createdAt: Date;
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

export async function listAuditEvents(service: Service, workspaceId: string, filter: AuditFilter = {}): Promise<AuditPage> {
  const cursor = parseCursor(filter.before);
  const type = filter.type?.trim();
  const rows = await service.db
    .select({ event: auditEvents, actorEmail: users.email })
    .from(auditEvents)
    .leftJoin(users, eq(users.id, auditEvents.actor))
    .where(
      and(
        eq(auditEvents.workspaceId, workspaceId),
        type ? (type.endsWith("*") ? like(auditEvents.type, `${type.slice(0, -1).replace(/[\\%_]/g, (c) => `\\${c}`)}%`) : eq(auditEvents.type, type)) : undefined,
        filter.from ? gte(auditEvents.createdAt, filter.from) : undefined,
        filter.to ? lte(auditEvents.createdAt, filter.to) : undefined,
        filter.flaggedOnly ? isNotNull(auditEvents.flagged) : undefined,
        cursor ? or(lt(auditEvents.createdAt, cursor.at), and(eq(auditEvents.createdAt, cursor.at), lt(auditEvents.id, cursor.id))) : undefined,
      ),
    )
    .orderBy(desc(auditEvents.createdAt), desc(auditEvents.id))
    .limit(AUDIT_PAGE_SIZE + 1);
  const page = rows.slice(0, AUDIT_PAGE_SIZE);
  const last = page[page.length - 1];
  return {
    entries: page.map(({ event, actorEmail }) => ({ ...event, actorEmail: actorEmail ?? (typeof event.data.operator === "string" ? event.data.operator : null) })),
    next: rows.length > AUDIT_PAGE_SIZE && last ? `${last.event.createdAt.toISOString()}|${last.event.id}` : null,
  };
}

/** The event types this workspace has, for the filter. */
export async function auditEventTypes(service: Service, workspaceId: string): Promise<string[]> {
  const rows = await service.db
    .selectDistinct({ type: auditEvents.type })
    .from(auditEvents)
    .where(eq(auditEvents.workspaceId, workspaceId))
    .orderBy(sql`1`);
  return rows.map((r) => r.type);
}
