/**
 * The database side of SAML connections: the replay store of accepted assertion IDs, and the SP
 * metadata a connection publishes (its settings read from the connection).
 */
import { and, eq } from "drizzle-orm";
import { enterpriseConnections, samlAssertionReplays } from "../../db/schema";
import type { EndpointContext } from "../http/context";
import { samlConfigSchema, spMetadata } from "./upstream/saml-settings";

/** Records an accepted assertion's ID until `until`; false when it was recorded before (a replay). */
export async function firstUseOfAssertion(ctx: EndpointContext, connectionId: string, assertionId: string, until: Date): Promise<boolean> {
  const fresh = await ctx.service.db
    .insert(samlAssertionReplays)
    .values({ workspaceId: ctx.workspace.id, connectionId, assertionId, expiresAt: until })
    .onConflictDoNothing()
    .returning({ id: samlAssertionReplays.assertionId });
  return fresh.length === 1;
}

/** The SP metadata of this workspace's SAML connection `connectionId` under the request's issuer, or null (no such connection, or not set up). */
export async function spMetadataOf(ctx: EndpointContext, connectionId: string): Promise<string | null> {
  const [row] = await ctx.service.db
    .select({ config: enterpriseConnections.config })
    .from(enterpriseConnections)
    .where(and(eq(enterpriseConnections.workspaceId, ctx.workspace.id), eq(enterpriseConnections.id, connectionId), eq(enterpriseConnections.kind, "saml")))
    .limit(1);
  const config = row ? samlConfigSchema.safeParse(row.config) : null;
  return config?.success ? spMetadata(ctx.issuer, connectionId, config.data) : null;
}
