import { auditEvents } from "../../db/schema";
import { newId } from "../crypto";
import type { Database } from "../../db/client";

export interface AuditInput {
  workspaceId: string;
  type: string;
  actor?: string | null;
  clientId?: string | null;
  subject?: string | null;
  reason?: string | null;
  /** Set to e.g. "possible_token_theft" to surface the event as a security warning. */
  flagged?: string | null;
  data?: Record<string, unknown>;
  ip?: string | null;
  at: Date;
}

export async function recordAudit(db: Database, input: AuditInput): Promise<void> {
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
