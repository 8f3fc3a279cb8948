import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm, Checkbox, CheckboxGroup, Field, Select, SubmitButton } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { DomainStatus } from "@/components/console/federation/domain-status";
import { TxtRecord } from "@/components/console/federation/txt-record";
import { TestConnectionButton } from "@/components/console/federation/test-connection-button";
import { listOrganizations, listRoles } from "@/lib/authz/model";
import { roleAtLeast } from "@/lib/console/authz";
import { connectionIssuer, listConnections, type ConnectionInfo } from "@/lib/console/organizations";
import { CONNECTION_KINDS, CONNECTION_PROTOCOLS, type ConnectionKind } from "@/lib/federation/protocols";
import { CONNECTION_PARTS } from "@/components/federation";
import { NewConnectionId } from "@/components/federation/draft";
import { ProtocolChoice } from "@/components/federation/protocol-choice";
import { newId } from "@/lib/crypto";
import { listDomains, txtRecordFor } from "@/lib/federation/domains";
import { listApplications } from "@/lib/console/applications";
import { listPendingInvitations, organizationAdministrators } from "@/lib/organizations/invitations";
import { getService } from "@/lib/service";
import { DirectoryCard } from "@/components/console/scim/directory-card";
import { ConnectionsCard, DomainsCard, InvitationsCard } from "@/app/_organizations/cards";
import { SetupLinksCard } from "@/components/console/admin-portal/setup-links-card";
import { listLinks } from "@/lib/organizations/admin-portal";
import { directoryView } from "@/lib/organizations/scim/console";
import { actionFor, connectionActionFor } from "../../../../../_lib/action-for";
import { testConnectionAction } from "../../../../../_lib/actions";
import { pageAccess } from "../../../../../_lib/session";

export const metadata: Metadata = { title: "Organization" };

export default async function OrganizationPage({
  params,
  searchParams,
}: {
  params: Promise<{ workspace: string; orgId: string }>;
  searchParams: Promise<{ protocol?: string | string[]; added?: string | string[] }>;
}) {
  const [{ workspace, orgId }, query] = await Promise.all([params, searchParams]);
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/organizations/${orgId}`);
  const service = await getService();
  const ws = access.workspace.id;
  const org = (await listOrganizations(service.db, ws)).find((o) => o.id === orgId);
  if (!org) notFound();
  const operator = { kind: "operator" as const, userId: access.operator.userId };
  const [connections, domains, roles, administrators, invitations, applications, directory, setupLinks] = await Promise.all([
    listConnections(service, ws, org.id),
    listDomains(service.db, ws, org.id),
    listRoles(service.db, ws),
    organizationAdministrators(service.db, ws, org.id),
    listPendingInvitations(service, service.db, { workspaceId: ws, organizationId: org.id, actor: operator }),
    listApplications(service, ws),
    directoryView(service, ws, org),
    listLinks(service.db, ws, org.id, service.clock.now()),
  ]);
  const signInApplications = applications.filter((a) => a.type !== "M2M");
  const issuer = connectionIssuer(service, ws);
  const hasConnection = connections.some((c) => c.active);
  const base = `/console/w/${ws}`;
  const readOnly = !roleAtLeast(access.role, "admin");
  const chosen = CONNECTION_KINDS.find((k) => k === query.protocol) ?? CONNECTION_KINDS[0];
  const path = `${base}/organizations/${org.id}`;
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Organizations", href: `${base}/organizations` }, { label: org.name }]}
        title={
          <span className="flex flex-wrap items-center gap-2">
            {org.name} {org.active ? <Badge tone="green">active</Badge> : <Badge tone="red">inactive</Badge>}
          </span>
        }
        description={<code className="font-mono">{org.slug}</code>}
      />
      <div className="space-y-6">
        <Card title="Settings">
          <ActionForm action={actionFor("updateOrganization", ws)} hidden={{ organization_id: org.id }} readOnly={readOnly} successMessage="Saved." label="Organization settings">
            <Field name="name" label="Name" defaultValue={org.name} />
            <Checkbox name="active" label="Active" defaultChecked={org.active} hint="Sessions in an inactive organization fail the checks." />
            <SubmitButton variant="secondary">Save</SubmitButton>
          </ActionForm>
        </Card>
        <Card title="Members" description="An administrator of the organization may invite people to it and withdraw its invitations.">
          <div className="space-y-4">
            {org.members.length === 0 ? (
              <EmptyState title="No members yet" />
            ) : (
              <Table caption="Members" head={["Member", "Administrator", ""]}>
                {org.members.map((m) => (
                  <tr key={m.userId}>
                    <Td>
                      <Link prefetch={false} className="font-medium text-indigo-700 hover:underline" href={`${base}/users/${m.userId}`}>
                        {m.email}
                      </Link>
                      {m.name ? <div className="text-xs text-slate-500">{m.name}</div> : null}
                    </Td>
                    <Td>
                      <ActionForm
                        action={actionFor("setOrganizationMemberAdministrator", ws)}
                        hidden={{ organization_id: org.id, user_id: m.userId, ...(administrators.has(m.userId) ? {} : { administrator: "true" }) }}
                        readOnly={readOnly}
                        className="flex items-center gap-2"
                        label={`Administrator: ${m.email}`}
                      >
                        {administrators.has(m.userId) ? <Badge tone="green">administrator</Badge> : null}
                        <SubmitButton variant="secondary" size="sm">
                          {administrators.has(m.userId) ? "Remove as administrator" : "Make administrator"}
                        </SubmitButton>
                      </ActionForm>
                    </Td>
                    <Td className="text-right">
                      <ActionForm action={actionFor("removeMember", ws)} hidden={{ organization: org.slug, user_id: m.userId }} readOnly={readOnly} className="" label="Remove member">
                        <ConfirmButton title={`Remove ${m.email}?`} message="They also lose every role they hold in this organization." confirmLabel="Remove">
                          Remove
                        </ConfirmButton>
                      </ActionForm>
                    </Td>
                  </tr>
                ))}
              </Table>
            )}
            <ActionForm action={actionFor("addMember", ws)} hidden={{ organization: org.slug }} readOnly={readOnly} className="grid items-end gap-3 sm:grid-cols-[1fr_auto]" label="Add member">
              <Field name="email" label="Add a user by email" type="email" />
              <SubmitButton variant="secondary">Add member</SubmitButton>
            </ActionForm>
          </div>
        </Card>
        <InvitationsCard
          orgId={org.id}
          invitations={invitations}
          roles={roles}
          applications={signInApplications}
          readOnly={readOnly}
          actions={{ invite: actionFor("inviteOrganizationMember", ws), resend: actionFor("resendOrganizationInvitation", ws), withdraw: actionFor("withdrawOrganizationInvitation", ws) }}
        />
        <ConnectionsCard
          orgId={org.id}
          issuer={issuer}
          connections={connections}
          roles={roles}
          readOnly={readOnly}
          chosen={chosen}
          path={path}
          added={typeof query.added === "string" ? query.added : undefined}
          actions={{ save: connectionActionFor(ws) }}
          extra={(c) => <TestConnectionButton action={testConnectionAction.bind(null, ws)} organizationId={org.id} connectionId={c.id} connectionName={c.name} readOnly={readOnly} />}
        />
        <DomainsCard
          orgId={org.id}
          domains={domains}
          hasConnection={hasConnection}
          readOnly={readOnly}
          actions={{ add: actionFor("addDomain", ws), check: actionFor("checkDomainDns", ws), remove: actionFor("removeDomain", ws), markVerified: actionFor("markDomainVerified", ws) }}
        />
        <DirectoryCard
          organizationId={org.id}
          view={directory}
          readOnly={readOnly}
          actions={{ save: actionFor("saveDirectorySettings", ws), issue: actionFor("issueScimToken", ws), revoke: actionFor("revokeScimToken", ws) }}
        />
        <SetupLinksCard organizationId={org.id} links={setupLinks} readOnly={readOnly} actions={{ create: actionFor("createPortalLink", ws), revoke: actionFor("revokePortalLink", ws) }} />
      </div>
    </>
  );
}
