import { AsyncLocalStorage } from "node:async_hooks";
import { auditEvents } from "../../db/schema";
import { newId } from "../crypto";
import type { Database } from "../../db/client";
import type { AuditData, AuditEventType } from "./catalogue";

/** An event to write: its type is a name of the catalogue (./catalogue.ts), its `data` that type's declared keys. */
export interface AuditInput<T extends AuditEventType = AuditEventType> {
  workspaceId: string;
  type: T;
  actor?: string | null;
  clientId?: string | null;
  subject?: string | null;
  reason?: string | null;
  /** Set to e.g. "possible_token_theft" to surface the event as a security warning. */
  flagged?: string | null;
  data?: AuditData<T>;
  ip?: string | null;
  at: Date;
}

/** An event a change's own writer recorded while a console operation ran, folded into that operation's one event. */
export interface FoldedAuditEvent {
  type: AuditEventType;
  subject?: string;
  client_id?: string;
  reason?: string;
  flagged?: string;
  data?: Record<string, unknown>;
}

/**
 * One change, one event: while a console operation runs, the events its inner writers record
 * (role assigned, grant revoked, …) are collected here instead of written, and the operation's
 * event carries them. The same writers used outside the console (the protocol, the CLI, the
 * portal) still write their own events.
 */
const folding = new AsyncLocalStorage<AuditInput[]>();

/** Runs `work`, returning the events recorded meanwhile instead of writing them. */
export async function foldingAudit<T>(work: () => Promise<T>): Promise<{ value: T; collected: AuditInput[] }> {
  const collected: AuditInput[] = [];
  const value = await folding.run(collected, work);
  return { value, collected };
}

/** How a collected event sits in the operation's event (`data.effects`). */
export function foldedEvent(input: AuditInput): FoldedAuditEvent {
  return {
    type: input.type,
    ...(input.subject ? { subject: input.subject } : {}),
    ...(input.clientId ? { client_id: input.clientId } : {}),
    ...(input.reason ? { reason: input.reason } : {}),
    ...(input.flagged ? { flagged: input.flagged } : {}),
    ...(input.data && Object.keys(input.data).length ? { data: input.data } : {}),
  };
}

export async function recordAudit<T extends AuditEventType>(db: Database, input: AuditInput<T>): Promise<void> {
  const collector = folding.getStore();
  if (collector) {
    // Its data was checked against its type where it was written.
    collector.push(input as unknown as AuditInput);
    return;
  }
  await writeAudit(db, input);
}

/** Writes the event whatever runs around it: the console operation's own event. */
export async function writeAudit<T extends AuditEventType>(db: Database, input: AuditInput<T>): Promise<void> {
  await db.insert(auditEvents).values({
    id: newId(),
    workspaceId: input.workspaceId,
    type: input.type,
    actor: input.actor ?? null,
    clientId: input.clientId ?? null,
    subject: input.subject ?? null,
    reason: input.reason ?? null,
    flagged: input.flagged ?? null,
    data: input.data ?? {},
    ip: input.ip ?? null,
    createdAt: input.at,
  });
}
