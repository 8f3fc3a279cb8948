// The `organizations` section as the workspace holds it: sorted by slug; members, domains and connections by natural key; upstream secrets and a SAML connection's SP key pair never appear.
import { eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { enterpriseConnections, organizationDomains, organizationMembers, organizations } from "../../../db/schema";
import { CONNECTION_PROTOCOLS } from "../../federation/protocols";
import type { WorkspaceDocument } from "../document";
import { byKey, namesById, str } from "./shared";

export async function exportOrganizations(db: Database, wid: string): Promise<Pick<WorkspaceDocument, "organizations">> {
  const [orgRows, memberRows, domainRows, connectionRows, emailById, roleById] = await Promise.all([
    db.select().from(organizations).where(eq(organizations.workspaceId, wid)),
    db.select().from(organizationMembers).where(eq(organizationMembers.workspaceId, wid)),
    db.select().from(organizationDomains).where(eq(organizationDomains.workspaceId, wid)),
    db.select().from(enterpriseConnections).where(eq(enterpriseConnections.workspaceId, wid)),
    namesById.users(db, wid),
    namesById.roles(db, wid),
  ]);
  return {
    organizations: orgRows.sort(byKey((o) => o.slug)).map((o) => {
      const administrators = memberRows
        .filter((m) => m.organizationId === o.id && m.administrator)
        .map((m) => emailById.get(m.userId) as string)
        .sort();
      return {
        slug: o.slug,
        name: o.name,
        active: o.active,
        members: memberRows
          .filter((m) => m.organizationId === o.id)
          .map((m) => emailById.get(m.userId) as string)
          .sort(),
        ...(administrators.length ? { administrators } : {}),
        domains: domainRows
          .filter((d) => d.organizationId === o.id)
          .sort(byKey((d) => d.domain))
          .map((d) => ({ domain: d.domain, ...(d.verifiedAt ? { verified: true } : {}) })),
        connections: connectionRows
          .filter((c) => c.organizationId === o.id)
          .sort(byKey((c) => c.name))
          .flatMap((c): WorkspaceDocument["organizations"][number]["connections"] => {
            const common = {
              default_roles: c.defaultRoleIds.flatMap((id) => roleById.get(id) ?? []).sort(),
              trust_upstream_mfa: c.trustUpstreamMfa,
              admission: c.admission,
              enabled: c.active,
            };
            // The protocol's own fields (lib/federation/protocols); a connection whose settings are incomplete is left out.
            const own = CONNECTION_PROTOCOLS[c.kind].file.export(c.config);
            return own ? [{ name: c.name, protocol: c.kind, ...own, ...common }] : [];
          }),
      };
    }),
  };
}
