/**
 * A new workspace's first steps, as the console's overview lists them until all are done: create
 * an application, copy its settings into the application's code, sign a test user in, and see that
 * sign-in in the audit log. Each step is ticked from what the workspace holds, never from what an
 * operator clicked: an application exists; one has been used (a code exchanged into a grant, or a
 * client secret used); a user has signed in (a hosted session, or its `sign_in.succeeded` event);
 * the audit log holds that event.
 */
import { eq, sql, type SQL } from "drizzle-orm";
import { auditEvents, clients, clientSecrets, grants, hostedSessions } from "../../db/schema";
import type { Service } from "../service";

export type GettingStartedStep = "application" | "connected" | "signed_in" | "audited";

export interface GettingStarted {
  steps: Record<GettingStartedStep, boolean>;
  /** The application the steps point at: the first one that signs users in (else the first one), by creation. */
  application: { clientId: string; name: string; signsUsersIn: boolean } | null;
  done: boolean;
}

export async function gettingStarted(service: Service, workspaceId: string): Promise<GettingStarted> {
  const db = service.db;
  const exists = (query: SQL) => sql<boolean>`exists (${query})`;
  const [[state], apps] = await Promise.all([
    db
      .select({
        connected: exists(
          sql`select 1 from ${grants} where ${grants.workspaceId} = ${workspaceId} union all select 1 from ${clientSecrets} where ${clientSecrets.workspaceId} = ${workspaceId} and ${clientSecrets.lastUsedAt} is not null`,
        ),
        signedIn: exists(sql`select 1 from ${hostedSessions} where ${hostedSessions.workspaceId} = ${workspaceId}`),
        audited: exists(sql`select 1 from ${auditEvents} where ${auditEvents.workspaceId} = ${workspaceId} and ${auditEvents.type} = 'sign_in.succeeded'`),
      })
      .from(sql`(select 1) as one`),
    db
      .select({ clientId: clients.clientId, name: clients.name, type: clients.type })
      .from(clients)
      .where(eq(clients.workspaceId, workspaceId))
      // Applications that sign users in first: the steps after the first need one.
      .orderBy(sql`${clients.type} = 'M2M'`, clients.createdAt)
      .limit(1),
  ]);
  const app = apps[0] ?? null;
  const audited = Boolean(state.audited);
  const steps = { application: app !== null, connected: Boolean(state.connected), signed_in: Boolean(state.signedIn) || audited, audited };
  return {
    steps,
    application: app ? { clientId: app.clientId, name: app.name, signsUsersIn: app.type !== "M2M" } : null,
    done: Object.values(steps).every(Boolean),
  };
}
