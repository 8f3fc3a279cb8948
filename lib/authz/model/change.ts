// Who changes the model (the Change every write takes) and the audit event each write records.
import type { Database } from "../../../db/client";
import { recordAudit } from "../../audit/events";
import type { Clock } from "../../clock";

/** Who changes what, for the audit log. */
export interface Change {
  workspaceId: string;
  clock: Clock;
  /** Console operator user id; null for the CLI and tests. */
  actor?: string | null;
}

export async function audit(db: Database, change: Change, type: string, data: Record<string, unknown>): Promise<void> {
  await recordAudit(db, { workspaceId: change.workspaceId, type, actor: change.actor ?? null, data, at: change.clock.now() });
}
