/**
 * Home-realm discovery: an address in a domain an organization has verified signs in through
 * that organization's enterprise connection. The answer depends on the domain only, never on
 * whether an account with the address exists, so the sign-in page behaves the same for both.
 */
import { and, asc, eq, isNotNull, sql } from "drizzle-orm";
import { reusable } from "../../db/reusable";
import { enterpriseConnections, organizationDomains, organizations } from "../../db/schema";
import type { EndpointContext } from "../http/context";
import { normalizeDomain } from "./domains";

/** The domain of an address as organizations claim domains (./domains.ts `normalizeDomain`: punycode, lower case); null when it has none. */
export function domainOf(address: string): string | null {
  const at = address.lastIndexOf("@");
  if (at < 1) return null;
  try {
    return normalizeDomain(address.slice(at + 1));
  } catch {
    return null;
  }
}

/** The enabled connection (OIDC or SAML) of the active organization that verified the address's domain, if any. */
export async function connectionForAddress(ctx: EndpointContext, address: string): Promise<{ connectionId: string; organizationId: string } | null> {
  const domain = domainOf(address);
  if (!domain) return null;
  const [row] = await ctx.service.db
    .select({ connectionId: enterpriseConnections.id, organizationId: organizations.id })
    .from(organizationDomains)
    .innerJoin(organizations, and(eq(organizations.id, organizationDomains.organizationId), eq(organizations.active, true)))
    .innerJoin(
      enterpriseConnections,
      and(
        eq(enterpriseConnections.workspaceId, organizationDomains.workspaceId),
        eq(enterpriseConnections.organizationId, organizations.id),
        eq(enterpriseConnections.active, true),
      ),
    )
    .where(and(eq(organizationDomains.workspaceId, ctx.workspace.id), eq(organizationDomains.domain, domain), isNotNull(organizationDomains.verifiedAt)))
    .orderBy(asc(enterpriseConnections.createdAt), asc(enterpriseConnections.id))
    .limit(1);
  return row ?? null;
}

/** Whether any organization of the workspace can be reached by home-realm discovery (the page then offers "single sign-on"). */
export async function workspaceHasSso(ctx: EndpointContext): Promise<boolean> {
  const [row] = await ssoStatement(ctx.service.db, { workspaceId: ctx.workspace.id });
  return row !== undefined;
}

/** Built once: every sign-in page asks it. */
const ssoStatement = reusable("latchkey_workspace_has_sso", (db) =>
  db
    .select({ id: organizationDomains.id })
    .from(organizationDomains)
    .innerJoin(organizations, and(eq(organizations.id, organizationDomains.organizationId), eq(organizations.active, true)))
    .innerJoin(enterpriseConnections, and(eq(enterpriseConnections.organizationId, organizations.id), eq(enterpriseConnections.active, true)))
    .where(and(eq(organizationDomains.workspaceId, sql.placeholder("workspaceId")), isNotNull(organizationDomains.verifiedAt)))
    .limit(1),
);

