// Who changes the model (the Change every write takes) and the audit event each write records.
import type { Database } from "../../../db/client";
import type { AuditData, AuditEventType } from "../../audit/catalogue";
import { recordAudit } from "../../audit/events";
import type { Clock } from "../../clock";

/** Who changes what, for the audit log. */
export interface Change {
  workspaceId: string;
  clock: Clock;
  /** Console operator user id; null for the CLI and tests. */
  actor?: string | null;
}

export async function audit<T extends AuditEventType>(db: Database, change: Change, type: T, data: AuditData<T>): Promise<void> {
  await recordAudit(db, { workspaceId: change.workspaceId, type, actor: change.actor ?? null, data, at: change.clock.now() });
}
