// The `organizations` section as the workspace holds it: sorted by slug; members, domains and connections by natural key; upstream secrets and a SAML connection's SP key pair never appear.
import { eq } from "drizzle-orm";
import type { Database } from "../../../db/client";
import { enterpriseConnections, organizationDomains, organizationMembers, organizations } from "../../../db/schema";
import { samlConfigSchema } from "../../federation/upstream/saml-settings";
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
    organizations: orgRows.sort(byKey((o) => o.slug)).map((o) => ({
      slug: o.slug,
      name: o.name,
      active: o.active,
      members: memberRows
        .filter((m) => m.organizationId === o.id)
        .map((m) => emailById.get(m.userId) as string)
        .sort(),
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
          if (c.kind === "oidc") {
            const issuer = str(c.config.issuer);
            const clientId = str(c.config.client_id);
            return issuer && clientId ? [{ name: c.name, protocol: "oidc" as const, issuer, client_id: clientId, ...common }] : [];
          }
          // A SAML connection's identity provider and options; its SP key pair stays with this installation.
          const saml = samlConfigSchema.safeParse(c.config);
          if (!saml.success) return [];
          const a = saml.data.attributes;
          return [
            {
              name: c.name,
              protocol: "saml" as const,
              saml: {
                idp_entity_id: saml.data.idp_entity_id,
                sso_url: saml.data.sso_url,
                idp_certificates: saml.data.idp_certificates,
                sign_requests: saml.data.sign_requests,
                allow_sha1: saml.data.allow_sha1,
                name_id_format: saml.data.name_id_format,
                attribute_preset: saml.data.attribute_preset,
                ...(saml.data.idp_initiated_client_id ? { idp_initiated_application: saml.data.idp_initiated_client_id } : {}),
                ...(saml.data.attribute_preset === "custom"
                  ? { attributes: { email: a.email, ...(a.name ? { name: a.name } : {}), ...(a.given_name ? { given_name: a.given_name } : {}), ...(a.family_name ? { family_name: a.family_name } : {}) } }
                  : {}),
              },
              ...common,
            },
          ];
        }),
    })),
  };
}
