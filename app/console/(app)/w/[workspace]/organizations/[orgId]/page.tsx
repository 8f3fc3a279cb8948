import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm, Checkbox, CheckboxGroup, Field, Select, SubmitButton, TextArea } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { DomainStatus } from "@/components/console/federation/domain-status";
import { CopyValue, TxtRecord } from "@/components/console/federation/txt-record";
import { listOrganizations, listRoles } from "@/lib/authz/model";
import { roleAtLeast } from "@/lib/console/authz";
import { federationCallbackUri, listConnections, samlServiceProvider, type ConnectionInfo } from "@/lib/console/organizations";
import { SAML_ATTRIBUTE_PRESETS } from "@/lib/federation/upstream/saml-settings";
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
  const certificates = Array.isArray(c.idp_certificates) ? c.idp_certificates.filter((v): v is string => typeof v === "string") : [];
  const attributes = (typeof c.attributes === "object" && c.attributes !== null ? c.attributes : {}) as Record<string, unknown>;
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
            { value: "saml", label: "SAML 2.0" },
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
      <details className="rounded-md border border-slate-200 px-3 py-2" open={connection?.kind === "saml"}>
        <summary className="cursor-pointer text-sm font-medium text-slate-700">SAML settings</summary>
        <div className="mt-3 grid gap-4">
          <p className="text-sm text-slate-600">
            Give the identity provider&apos;s metadata (paste it, or its URL), or type its entity ID, single sign-on URL and signing certificate. Metadata given here
            replaces the typed values.
          </p>
          <TextArea name="metadata_xml" label="Identity provider metadata (XML)" optional rows={4} placeholder="<EntityDescriptor …>" />
          <div className="grid gap-4 sm:grid-cols-2">
            <Field name="metadata_url" label="Metadata URL" optional defaultValue={str(c.metadata_url)} hint="Fetched when it changes, or when “Fetch again” is ticked. https; http only on localhost." />
            <Checkbox name="refresh_metadata" label="Fetch the metadata URL again" hint="After the identity provider rotated its certificate." />
            <Field name="idp_entity_id" label="Identity provider entity ID" optional defaultValue={str(c.idp_entity_id)} />
            <Field name="sso_url" label="Single sign-on URL (HTTP-Redirect)" optional defaultValue={str(c.sso_url)} />
          </div>
          <TextArea name="idp_certificate" label="Signing certificate" optional rows={3} defaultValue={certificates[0] ?? ""} placeholder="-----BEGIN CERTIFICATE-----" />
          <TextArea name="idp_certificate_next" label="Next signing certificate (rotation)" optional rows={3} defaultValue={certificates[1] ?? ""} hint="Responses signed by either are accepted." />
          <div className="grid gap-4 sm:grid-cols-2">
            <Select
              name="attribute_preset"
              label="Attribute names"
              defaultValue={str(c.attribute_preset) || "custom"}
              options={[
                ...Object.entries(SAML_ATTRIBUTE_PRESETS).map(([value, preset]) => ({ value, label: preset.label })),
                { value: "custom", label: "Custom (below)" },
              ]}
              hint="Which assertion attributes carry the email address and the name."
            />
            <Select
              name="name_id_format"
              label="NameID format requested"
              defaultValue={str(c.name_id_format) || "persistent"}
              options={[
                { value: "persistent", label: "Persistent (recommended)" },
                { value: "emailAddress", label: "Email address" },
                { value: "unspecified", label: "Unspecified" },
              ]}
              hint="The NameID identifies the user. A transient NameID is refused."
            />
            <Field name="attribute_email" label="Email attribute (custom)" optional defaultValue={str(attributes.email)} placeholder="email" />
            <Field name="attribute_name" label="Name attribute (custom)" optional defaultValue={str(attributes.name)} />
            <Field name="attribute_given_name" label="Given name attribute (custom)" optional defaultValue={str(attributes.given_name)} />
            <Field name="attribute_family_name" label="Family name attribute (custom)" optional defaultValue={str(attributes.family_name)} />
          </div>
          <Field
            name="idp_initiated_client_id"
            label="Sign-in started at the identity provider: send to application (client id)"
            optional
            defaultValue={str(c.idp_initiated_client_id)}
            hint="A response no sign-in here asked for is never accepted (it could be replayed into another browser). With an application named here, the user goes to its home page and signs in from there; left empty, the user sees an error page."
          />
          <Checkbox name="sign_requests" label="Sign AuthnRequests" defaultChecked={c.sign_requests === true} hint="For identity providers that require signed requests (the SP metadata then lists the signing certificate)." />
          <Checkbox
            name="allow_sha1"
            label="Accept SHA-1 signatures (legacy identity providers only)"
            defaultChecked={c.allow_sha1 === true}
            hint="SHA-1 signatures can be forged with enough effort. Turn this on only for an identity provider that cannot sign with SHA-256, and ask it to move. Recorded in the audit log."
          />
        </div>
      </details>
      <Checkbox name="active" label="Enabled" defaultChecked={connection?.active ?? true} />
      <SubmitButton variant={connection ? "secondary" : "primary"}>{connection ? "Save connection" : "Add connection"}</SubmitButton>
    </ActionForm>
  );
}

/** The last sign-in through the connection, and the last failure with the condition that failed (administrators only). */
function ConnectionStatus({ connection }: { connection: ConnectionInfo }) {
  const at = (d: Date | null) => (d ? d.toISOString().replace("T", " ").slice(0, 16) + " UTC" : "never");
  return (
    <dl className="mb-3 grid gap-1 text-sm text-slate-600 sm:grid-cols-[max-content_1fr] sm:gap-x-3">
      <dt className="font-medium">Last sign-in</dt>
      <dd>{at(connection.lastSuccessAt)}</dd>
      <dt className="font-medium">Last failure</dt>
      <dd>{connection.lastFailureAt ? `${at(connection.lastFailureAt)}: ${connection.lastFailure ?? ""}` : "none"}</dd>
    </dl>
  );
}

/** What to give the identity provider for a SAML connection: our SP addresses, and the metadata to download. */
function SamlServiceProvider({ sp }: { sp: { entityId: string; acs: string; metadata: string } }) {
  return (
    <div className="mb-3 space-y-2 rounded-md bg-slate-50 p-3">
      <p className="text-sm text-slate-700">Give the identity provider these (or the SP metadata):</p>
      <CopyValue label="Entity ID (audience)" value={sp.entityId} />
      <CopyValue label="ACS URL (reply URL)" value={sp.acs} />
      <p className="text-sm">
        <a className="font-medium text-indigo-700 underline" href={sp.metadata} download>
          Download SP metadata
        </a>
      </p>
    </div>
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
  const hasConnection = connections.some((c) => c.active);
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
          description="Members with an address in a verified domain (below) sign in through the organization's enabled connection (OpenID Connect or SAML 2.0)."
        >
          <div className="space-y-6">
            <div className="rounded-md bg-slate-50 p-3">
              <p className="mb-2 text-sm text-slate-700">OpenID Connect: register this redirect URI with the identity provider (SAML connections show their own addresses below):</p>
              <CopyValue label="URI" value={callbackUri} />
            </div>
            {connections.map((c) => (
              <div key={c.id} className="rounded-md border border-slate-200 p-4">
                <p className="mb-3 flex flex-wrap items-center gap-2 text-sm font-semibold">
                  {c.name} <Badge>{c.kind.toUpperCase()}</Badge> {c.active ? <Badge tone="green">enabled</Badge> : <Badge>disabled</Badge>}
                  {c.kind === "saml" && !c.config.idp_entity_id ? <Badge tone="amber">not set up: give the identity provider&apos;s metadata</Badge> : null}
                  {c.kind === "saml" && c.config.allow_sha1 === true ? <Badge tone="amber">accepts SHA-1 signatures</Badge> : null}
                  {c.kind === "oidc" && !c.hasSecret ? <Badge tone="amber">no client secret</Badge> : null}
                  {c.admission === "any_vouched" ? <Badge tone="amber">admits anyone it vouches for</Badge> : <Badge>admits verified domains only</Badge>}
                </p>
                <ConnectionStatus connection={c} />
                {c.kind === "saml" && c.config.sp_certificate ? <SamlServiceProvider sp={samlServiceProvider(service, ws, c.id)} /> : null}
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
            {!hasConnection && domains.some((d) => d.verifiedAt) ? (
              <p className="text-sm text-amber-800">No enabled connection: addresses in these domains sign in as usual until one is added.</p>
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
