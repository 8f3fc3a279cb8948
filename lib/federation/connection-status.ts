/**
 * What an enterprise connection's administrators see of its sign-ins: the last success, and the
 * last failure with the condition that failed (an assertion's wrong audience, an expired response,
 * an address outside the verified domains). Users only ever see the catalogue's page; this text
 * is for the console, and holds no assertion content beyond what names the condition.
 */
import { and, eq } from "drizzle-orm";
import { enterpriseConnections } from "../../db/schema";
import type { EndpointContext } from "../http/context";

const MAX_REASON = 500;

export async function recordConnectionFailure(ctx: EndpointContext, connectionId: string, reason: string): Promise<void> {
  await ctx.service.db
    .update(enterpriseConnections)
    .set({ lastFailureAt: ctx.service.clock.now(), lastFailure: reason.slice(0, MAX_REASON) })
    .where(and(eq(enterpriseConnections.workspaceId, ctx.workspace.id), eq(enterpriseConnections.id, connectionId)));
}

export async function recordConnectionSuccess(ctx: EndpointContext, connectionId: string): Promise<void> {
  await ctx.service.db
    .update(enterpriseConnections)
    .set({ lastSuccessAt: ctx.service.clock.now() })
    .where(and(eq(enterpriseConnections.workspaceId, ctx.workspace.id), eq(enterpriseConnections.id, connectionId)));
}
