/**
 * Security alerts in the portal: each time a refresh token of one of the user's sign-ins was
 * presented again after it had been replaced, and the service ended that sign-in as a possible
 * token theft (lib/oauth/grants/refresh-token.ts records the audit event, flagged
 * "possible_token_theft"). The user sees which application, when, and from which address the
 * reused token came; the administrator sees the same event in the console's audit log.
 */
import { and, desc, eq, gt, sql } from "drizzle-orm";
import { auditEvents, clients, grants } from "../../db/schema";
import { DAY } from "../clock";
import type { EndpointContext } from "../http/context";

type Ctx = Pick<EndpointContext, "service" | "workspace">;

/** The type and flag of the event an alert is made from. */
export const TOKEN_THEFT_EVENT = { type: "refresh.reuse_detected", flagged: "possible_token_theft" } as const;

/** Alerts older than this are not shown (the console's audit log keeps them). */
export const ALERTS_SHOWN_FOR_MS = 90 * DAY;
export const ALERTS_LISTED = 20;

export interface SecurityAlert {
  id: string;
  at: Date;
  clientId: string | null;
  /** The application's name, or null when the application no longer exists. */
  applicationName: string | null;
  /** The client address the reused token was presented from; null when unknown. */
  address: string | null;
}

/** The user's token-theft alerts of the last ALERTS_SHOWN_FOR_MS, newest first. */
export async function listSecurityAlerts(ctx: Ctx, userId: string): Promise<SecurityAlert[]> {
  const ws = ctx.workspace.id;
  const since = new Date(ctx.service.clock.now().getTime() - ALERTS_SHOWN_FOR_MS);
  const rows = await ctx.service.db
    .select({ id: auditEvents.id, at: auditEvents.createdAt, clientId: auditEvents.clientId, applicationName: clients.name, address: auditEvents.ip })
    .from(auditEvents)
    // The event names the grant (the refresh family) it ended; the grant names the user.
    .innerJoin(grants, and(eq(grants.workspaceId, auditEvents.workspaceId), eq(grants.id, sql`${auditEvents.data} ->> 'grant_id'`)))
    .leftJoin(clients, eq(clients.id, grants.clientPk))
    .where(
      and(
        eq(auditEvents.workspaceId, ws),
        eq(auditEvents.type, TOKEN_THEFT_EVENT.type),
        eq(auditEvents.flagged, TOKEN_THEFT_EVENT.flagged),
        gt(auditEvents.createdAt, since),
        eq(grants.userId, userId),
      ),
    )
    .orderBy(desc(auditEvents.createdAt), desc(auditEvents.id))
    .limit(ALERTS_LISTED);
  return rows;
}
