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
import { CopyValue, TxtRecord } from "@/components/console/federation/txt-record";
import { listOrganizations, listRoles } from "@/lib/authz/model";
import { roleAtLeast } from "@/lib/console/authz";
import { federationCallbackUri, listConnections, type ConnectionInfo } from "@/lib/console/organizations";
import { listDomains, txtRecordFor } from "@/lib/federation/domains";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../../_lib/action-for";
import { pageAccess } from "../../../../../_lib/session";

export const metadata: Metadata = { title: "Organization" };

function ConnectionForm({
  ws,
  orgId,
  connection,
  roles,
  readOnly,
}: {
  ws: string;
  orgId: string;
  connection?: ConnectionInfo;
  roles: { id: string; name: string }[];
  readOnly: boolean;
}) {
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
        <Select
          name="kind"
          label="Protocol"
          defaultValue={connection?.kind ?? "oidc"}
          options={[
            { value: "oidc", label: "OpenID Connect" },
            { value: "saml", label: "SAML 2.0 (not used for sign-in yet)" },
          ]}
        />
        <Field name="issuer" label="Issuer (OIDC)" optional defaultValue={str(c.issuer)} placeholder="https://acme.okta.com" hint="Exactly as the provider's discovery document says it. https; http only on localhost." />
        <Field name="client_id" label="Client id (OIDC)" optional defaultValue={str(c.client_id)} />
        <Field
          name="client_secret"
          label="Client secret (OIDC)"
          type="password"
          optional
          autoComplete="new-password"
          hint={connection?.hasSecret ? "Set (stored encrypted, never shown). Leave empty to keep it." : "Not set. Stored encrypted; never shown again."}
        />
      </div>
      {roles.length > 0 ? (
        <CheckboxGroup
          name="default_role_ids"
          legend="Default roles"
          options={roles.map((r) => ({ value: r.id, label: r.name }))}
          defaultValues={connection?.defaultRoleIds ?? []}
          hint="Given in this organization to a member the connection adds at first sign-in."
        />
      ) : (
        <p className="text-sm text-slate-500">No roles in this workspace yet: define roles to give new members a default.</p>
      )}
      <Select
        name="admission"
        label="Who a first sign-in admits"
        defaultValue={connection?.admission ?? "verified_domains"}
        options={[
          { value: "verified_domains", label: "Only addresses in this organization's verified domains (recommended)" },
          { value: "any_vouched", label: "Anyone this connection's provider vouches for" },
        ]}
        hint="A first sign-in through the connection adds the user to this organization with the default roles. With the second choice, any verified address the provider asserts joins (never an address in another organization's verified domain): choose it only for a provider that signs in nobody but your own people. Changes are recorded in the audit log."
      />
      <Checkbox
        name="trust_upstream_mfa"
        label="Trust upstream MFA"
        defaultChecked={connection?.trustUpstreamMfa ?? false}
        hint="When the provider says it used multi-factor authentication (amr / acr), it counts as MFA here. Otherwise the sign-in counts as one factor."
      />
      <details className="rounded-md border border-slate-200 px-3 py-2">
        <summary className="cursor-pointer text-sm font-medium text-slate-700">SAML settings (stored, not used for sign-in yet)</summary>
        <div className="mt-3 grid gap-4 sm:grid-cols-2">
          <Field name="metadata_url" label="Metadata URL (SAML)" optional defaultValue={str(c.metadata_url)} />
          <Field name="entity_id" label="Entity id (SAML)" optional defaultValue={str(c.entity_id)} />
        </div>
      </details>
      <Checkbox name="active" label="Enabled" defaultChecked={connection?.active ?? true} />
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
  const [connections, domains, roles] = await Promise.all([listConnections(service, ws, org.id), listDomains(service.db, ws, org.id), listRoles(service.db, ws)]);
  const callbackUri = federationCallbackUri(service, ws);
  const hasOidc = connections.some((c) => c.kind === "oidc" && c.active);
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
        <Card
          id="connections"
          title="Enterprise connections"
          description="Members with an address in a verified domain (below) sign in through the organization's enabled OpenID Connect connection."
        >
          <div className="space-y-6">
            <div className="rounded-md bg-slate-50 p-3">
              <p className="mb-2 text-sm text-slate-700">Register this redirect URI with the identity provider:</p>
              <CopyValue label="URI" value={callbackUri} />
            </div>
            {connections.map((c) => (
              <div key={c.id} className="rounded-md border border-slate-200 p-4">
                <p className="mb-3 flex flex-wrap items-center gap-2 text-sm font-semibold">
                  {c.name} <Badge>{c.kind.toUpperCase()}</Badge> {c.active ? <Badge tone="green">enabled</Badge> : <Badge>disabled</Badge>}
                  {c.kind === "saml" ? <Badge tone="amber">not used for sign-in yet</Badge> : null}
                  {c.kind === "oidc" && !c.hasSecret ? <Badge tone="amber">no client secret</Badge> : null}
                  {c.kind === "oidc" ? c.admission === "any_vouched" ? <Badge tone="amber">admits anyone it vouches for</Badge> : <Badge>admits verified domains only</Badge> : null}
                </p>
                <ConnectionForm ws={ws} orgId={org.id} connection={c} roles={roles} readOnly={readOnly} />
              </div>
            ))}
            <div className="rounded-md border border-dashed border-slate-300 p-4">
              <p className="mb-3 text-sm font-semibold">New connection</p>
              <ConnectionForm ws={ws} orgId={org.id} roles={roles} readOnly={readOnly} />
            </div>
          </div>
        </Card>
        <Card
          id="domains"
          title="Email domains"
          description="Addresses in a verified domain sign in through this organization's connection. Verify a domain by publishing the TXT record shown, then Check DNS."
        >
          <div className="space-y-5">
            {!hasOidc && domains.some((d) => d.verifiedAt) ? (
              <p className="text-sm text-amber-800">No enabled OpenID Connect connection: addresses in these domains sign in as usual until one is added.</p>
            ) : null}
            {domains.length === 0 ? (
              <EmptyState title="No domains yet">Add the domain of the organization&apos;s email addresses, such as example.com.</EmptyState>
            ) : (
              <ul className="divide-y divide-slate-100 rounded-md border border-slate-200">
                {domains.map((d) => (
                  <li key={d.id} className="space-y-3 p-4">
                    <div className="flex flex-wrap items-center justify-between gap-2">
                      <span className="flex flex-wrap items-center gap-2">
                        <span className="font-mono text-sm font-medium">{d.domain}</span>
                        <DomainStatus verifiedAt={d.verifiedAt} method={d.verificationMethod} />
                      </span>
                      <ActionForm action={actionFor("removeDomain", ws)} hidden={{ organization_id: org.id, domain_id: d.id }} readOnly={readOnly} className="" label={`Remove ${d.domain}`}>
                        <ConfirmButton title={`Remove ${d.domain}?`} message="Addresses in this domain stop signing in through this organization's connection. Adding it again needs a new verification." confirmLabel="Remove">
                          Remove
                        </ConfirmButton>
                      </ActionForm>
                    </div>
                    {d.verificationMethod !== "dns" ? (
                      <div className="space-y-3">
                        <p className="text-sm text-slate-600">Publish this DNS record, then check it:</p>
                        <TxtRecord {...txtRecordFor(d)} />
                        <div className="flex flex-wrap items-start gap-2">
                          <ActionForm
                            action={actionFor("checkDomainDns", ws)}
                            hidden={{ organization_id: org.id, domain_id: d.id, domain: d.domain }}
                            readOnly={readOnly}
                            className=""
                            successMessage="Verified by DNS."
                            label={`Check DNS for ${d.domain}`}
                          >
                            <SubmitButton variant="secondary" size="sm">
                              Check DNS
                            </SubmitButton>
                          </ActionForm>
                          {!d.verifiedAt ? (
                            <ActionForm action={actionFor("markDomainVerified", ws)} hidden={{ organization_id: org.id, domain_id: d.id }} readOnly={readOnly} className="" label={`Mark ${d.domain} verified`}>
                              <ConfirmButton
                                title={`Mark ${d.domain} verified?`}
                                message="Only when you know the organization controls this domain: its addresses will sign in through the organization's connection. This is recorded in the audit log under your name."
                                confirmLabel="Mark verified"
                                variant="secondary"
                              >
                                Mark verified
                              </ConfirmButton>
                            </ActionForm>
                          ) : null}
                        </div>
                      </div>
                    ) : null}
                  </li>
                ))}
              </ul>
            )}
            <ActionForm action={actionFor("addDomain", ws)} hidden={{ organization_id: org.id }} readOnly={readOnly} className="grid items-end gap-3 sm:grid-cols-[1fr_auto]" label="Add domain">
              <Field name="domain" label="Add a domain" placeholder="example.com" />
              <SubmitButton variant="secondary">Add domain</SubmitButton>
            </ActionForm>
          </div>
        </Card>
      </div>
    </>
  );
}
