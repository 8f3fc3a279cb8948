import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm, Checkbox, Field, Select, SubmitButton, TextArea } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { listOrganizations } from "@/lib/authz/model";
import { roleAtLeast } from "@/lib/console/authz";
import { listConnections, type ConnectionInfo } from "@/lib/console/organizations";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../../_lib/action-for";
import { pageAccess } from "../../../../../_lib/session";

export const metadata: Metadata = { title: "Organization" };

function ConnectionForm({ ws, orgId, connection, readOnly }: { ws: string; orgId: string; connection?: ConnectionInfo; readOnly: boolean }) {
  const c = connection?.config ?? {};
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  return (
    <ActionForm
      action={actionFor("saveConnection", ws)}
      hidden={{ organization_id: orgId, ...(connection ? { connection_id: connection.id } : {}) }}
      readOnly={readOnly}
      successMessage="Saved."
      label={connection ? `Connection ${connection.name}` : "New connection"}
    >
      <div className="grid gap-4 sm:grid-cols-2">
        <Field name="name" label="Name" defaultValue={connection?.name} placeholder="Acme Okta" />
        <Select name="kind" label="Protocol" defaultValue={connection?.kind ?? "oidc"} options={[{ value: "oidc", label: "OpenID Connect" }, { value: "saml", label: "SAML 2.0" }]} />
        <Field name="issuer" label="Issuer (OIDC)" optional defaultValue={str(c.issuer)} placeholder="https://acme.okta.com" />
        <Field name="client_id" label="Client id (OIDC)" optional defaultValue={str(c.client_id)} />
        <Field
          name="client_secret"
          label="Client secret (OIDC)"
          type="password"
          optional
          hint={connection?.hasSecret ? "A secret is stored (encrypted). Leave empty to keep it." : "Stored encrypted; never shown again."}
        />
        <Field name="metadata_url" label="Metadata URL (SAML)" optional defaultValue={str(c.metadata_url)} />
        <Field name="entity_id" label="Entity id (SAML)" optional defaultValue={str(c.entity_id)} />
      </div>
      <TextArea name="domains" label="Email domains" optional defaultValue={Array.isArray(c.domains) ? c.domains.join("\n") : ""} hint="One per line: users with these email domains will be sent to this connection (when enterprise sign-in arrives)." />
      <Checkbox name="active" label="Active" defaultChecked={connection?.active ?? true} />
      <SubmitButton variant={connection ? "secondary" : "primary"}>{connection ? "Save connection" : "Add connection"}</SubmitButton>
    </ActionForm>
  );
}

export default async function OrganizationPage({ params }: { params: Promise<{ workspace: string; orgId: string }> }) {
  const { workspace, orgId } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/organizations/${orgId}`);
  const service = await getService();
  const ws = access.workspace.id;
  const org = (await listOrganizations(service.db, ws)).find((o) => o.id === orgId);
  if (!org) notFound();
  const connections = await listConnections(service, ws, org.id);
  const base = `/console/w/${ws}`;
  const readOnly = !roleAtLeast(access.role, "admin");
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
        <Card title="Members">
          <div className="space-y-4">
            {org.members.length === 0 ? (
              <EmptyState title="No members yet" />
            ) : (
              <Table caption="Members" head={["Member", ""]}>
                {org.members.map((m) => (
                  <tr key={m.userId}>
                    <Td>
                      <Link prefetch={false} className="font-medium text-indigo-700 hover:underline" href={`${base}/users/${m.userId}`}>
                        {m.email}
                      </Link>
                      {m.name ? <div className="text-xs text-slate-500">{m.name}</div> : null}
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
        <Card title="Enterprise connections" description="Configuration only for now: sign-in through these connections comes in a later release.">
          <div className="space-y-6">
            {connections.map((c) => (
              <div key={c.id} className="rounded-md border border-slate-200 p-4">
                <p className="mb-3 flex items-center gap-2 text-sm font-semibold">
                  {c.name} <Badge>{c.kind.toUpperCase()}</Badge> {c.active ? <Badge tone="green">active</Badge> : <Badge>inactive</Badge>}
                </p>
                <ConnectionForm ws={ws} orgId={org.id} connection={c} readOnly={readOnly} />
              </div>
            ))}
            <div className="rounded-md border border-dashed border-slate-300 p-4">
              <p className="mb-3 text-sm font-semibold">New connection</p>
              <ConnectionForm ws={ws} orgId={org.id} readOnly={readOnly} />
            </div>
          </div>
        </Card>
      </div>
    </>
  );
}
