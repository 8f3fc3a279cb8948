/**
 * The primary hostname, one rule: a workspace's primary hostname is the one marked primary that is
 * verified (an unverified name never serves, so it is never primary, whatever its mark). The
 * console shows the workspace's issuer there, and under WebAuthn related origins every hostname
 * of the workspace shares its RP ID.
 *
 * One SQL form for statements (`primaryHostnameSql`) and its JS twin for loaded rows
 * (`isPrimaryHostname`), held equal by tests/integration/hostnames-primary.test.ts. Lower layers
 * (lib/authn's relying party) do not read it: the endpoint context carries what it resolved
 * (lib/http/context.ts `relatedOriginsRpId`, set by lib/server's `contextFor`).
 */
import { and, eq, isNotNull, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client";
import { workspaceHostnames, workspaces } from "../../db/schema";

/** The condition "this row is its workspace's primary hostname". */
export function primaryHostnameSql(h: typeof workspaceHostnames = workspaceHostnames): SQL {
  return and(eq(h.primary, true), isNotNull(h.verifiedAt))!;
}

/** The same rule for a loaded row. */
export function isPrimaryHostname(row: { primary: boolean; verifiedAt: Date | null }): boolean {
  return row.primary && row.verifiedAt !== null;
}

/** The workspace's primary hostname, null when it has none (the default host is then its primary address). */
export async function primaryHostname(db: Database, workspaceId: string): Promise<string | null> {
  const [row] = await db
    .select({ hostname: workspaceHostnames.hostname })
    .from(workspaceHostnames)
    .where(and(eq(workspaceHostnames.workspaceId, workspaceId), primaryHostnameSql()))
    .limit(1);
  return row?.hostname ?? null;
}

/**
 * The RP ID every hostname of the workspace shares under WebAuthn related origins: its primary
 * hostname while the setting (`workspaces.related_origins`) is on; null otherwise, and then each
 * host is its own RP ID. The primary hostname serves `/.well-known/webauthn` exactly when this
 * names it.
 */
export async function relatedOriginsRpId(db: Database, workspaceId: string): Promise<string | null> {
  const h = workspaceHostnames;
  const [row] = await db
    .select({ hostname: h.hostname })
    .from(workspaces)
    .innerJoin(h, and(eq(h.workspaceId, workspaces.id), primaryHostnameSql(h)))
    .where(and(eq(workspaces.id, workspaceId), eq(workspaces.relatedOrigins, true)))
    .limit(1);
  return row?.hostname ?? null;
}
