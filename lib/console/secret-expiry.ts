/**
 * "Client secret expiring soon": one rule for the overview's warning, the application list's badge
 * and the application page's secrets. What keeps a confidential client working is its longest-lived
 * live secret, so a client is warned about when that one expires within 14 days. A secret that
 * another live secret outlives (the old one of a rotation with overlap) is meant to expire: it is
 * never the reason for a warning.
 */
import { and, eq } from "drizzle-orm";
import { secretActiveSql } from "../authority";
import type { Database } from "../../db/client";
import { clients, clientSecrets } from "../../db/schema";
import { DAY } from "../clock";

export const SECRET_WARNING_MS = 14 * DAY;

interface LiveSecret {
  id: string;
  expiresAt: Date;
}

/** Whether a client whose longest-lived live secret expires at `expiresAt` is warned about. */
export function expiresSoon(expiresAt: Date, now: Date): boolean {
  return expiresAt.getTime() - now.getTime() < SECRET_WARNING_MS;
}

/**
 * Whether `secret`, one of a client's live secrets `live`, is the one to warn about: it expires
 * within 14 days and no other live secret of the client expires later.
 */
export function warnsOfExpiry(secret: LiveSecret, live: readonly LiveSecret[], now: Date): boolean {
  const outlived = live.some((other) => other.id !== secret.id && other.expiresAt.getTime() > secret.expiresAt.getTime());
  return !outlived && expiresSoon(secret.expiresAt, now);
}

/** Per client of the workspace (by its row id): its client_id and the expiry of its longest-lived live secret. */
export async function latestSecretExpiries(db: Database, workspaceId: string, now: Date): Promise<Map<string, { clientId: string; expiresAt: Date }>> {
  const rows = await db
    .select({ clientPk: clientSecrets.clientPk, clientId: clients.clientId, expiresAt: clientSecrets.expiresAt })
    .from(clientSecrets)
    .innerJoin(clients, eq(clients.id, clientSecrets.clientPk))
    .where(and(eq(clientSecrets.workspaceId, workspaceId), secretActiveSql(clientSecrets, now)));
  const out = new Map<string, { clientId: string; expiresAt: Date }>();
  for (const r of rows) {
    const seen = out.get(r.clientPk);
    if (!seen || r.expiresAt.getTime() > seen.expiresAt.getTime()) out.set(r.clientPk, { clientId: r.clientId, expiresAt: r.expiresAt });
  }
  return out;
}

/** The clients to warn about, soonest first: those whose longest-lived live secret expires within 14 days. */
export async function expiringClientSecrets(db: Database, workspaceId: string, now: Date): Promise<{ clientId: string; expiresAt: Date }[]> {
  const latest = await latestSecretExpiries(db, workspaceId, now);
  return [...latest.values()].filter((s) => expiresSoon(s.expiresAt, now)).sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime());
}
