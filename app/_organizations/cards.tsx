/**
 * An organization's cards, shared by the console's organization page (operators) and the
 * organization's admin portal (its own IT): its enterprise connections, its email domains and its
 * invitations. Each form's action is the surface's own (the console's operation, or the portal's,
 * which runs the same operation scoped to its organization), so both show and change the same rules.
 */
import type { ReactNode } from "react";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm, Checkbox, CheckboxGroup, Field, Select, SubmitButton } from "@/components/ui/form";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { DomainStatus } from "@/components/console/federation/domain-status";
import { TxtRecord } from "@/components/console/federation/txt-record";
import { CONNECTION_PARTS } from "@/components/federation";
import { NewConnectionId } from "@/components/federation/draft";
import { ProtocolChoice } from "@/components/federation/protocol-choice";
import type { ConnectionInfo } from "@/lib/console/organizations";
import { newId } from "@/lib/crypto";
import { CONNECTION_PROTOCOLS, type ConnectionKind } from "@/lib/federation/protocols";
import { txtRecordFor, type listDomains } from "@/lib/federation/domains";
import type { ServerAction } from "@/lib/forms/action-state";
import type { PendingInvitation } from "@/lib/organizations/invitations";

/**
 * A connection's form, with its protocol's fields only: a saved connection's protocol, or the one
 * chosen above the new connection's form (ProtocolChoice). A new connection's id is drawn here,
 * so the addresses that name it can be shown before it is saved.
 */
function ConnectionForm({
  save,
  orgId,
  issuer,
  kind,
  connection,
  roles,
  readOnly,
}: {
  save: ServerAction;
  orgId: string;
  issuer: string;
  kind: ConnectionKind;
  connection?: ConnectionInfo;
  roles: { id: string; name: string }[];
  readOnly: boolean;
}) {
  const { Fields, Section } = CONNECTION_PARTS[kind];
  const newConnectionId = connection ? "" : newId();
  return (
    <ActionForm
      action={save}
      hidden={{ organization_id: orgId, kind, ...(connection ? { connection_id: connection.id } : {}) }}
      readOnly={readOnly}
      successMessage="Saved."
      label={connection ? `Connection ${connection.name}` : "New connection"}
    >
      {/* The default button, first in the form: Enter in a field saves, never a protocol's other button (SAML's "Read metadata"). */}
      <button type="submit" hidden tabIndex={-1} />
      {connection ? null : <NewConnectionId drawn={newConnectionId} />}
      <div className="grid gap-4 sm:grid-cols-2">
        <Field name="name" label="Name" defaultValue={connection?.name} placeholder="Acme Okta" />
        {Fields ? <Fields connection={connection} /> : null}
      </div>
      {Section ? <Section connection={connection} issuer={issuer} newConnectionId={newConnectionId} /> : null}
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

/** The organization's enterprise connections: each with its status and form, and a new one's form (its protocol chosen above it). */
export function ConnectionsCard({
  orgId,
  issuer,
  connections,
  roles,
  readOnly,
  chosen,
  path,
  added,
  actions,
  extra,
}: {
  orgId: string;
  issuer: string;
  connections: ConnectionInfo[];
  roles: { id: string; name: string }[];
  readOnly: boolean;
  chosen: ConnectionKind;
  /** The page's path, which the protocol choice reloads with `?protocol=`. */
  path: string;
  /** A connection just added, which its form says. */
  added?: string;
  actions: { save: ServerAction };
  /** What the surface adds below a saved connection's status (its test). */
  extra?: (connection: ConnectionInfo) => ReactNode;
}) {
  return (
    <Card
      id="connections"
      title="Enterprise connections"
      description={`Members with an address in a verified domain (below) sign in through the organization's enabled connection (${Object.values(CONNECTION_PROTOCOLS)
        .map((p) => p.label)
        .join(" or ")}).`}
    >
      <div className="space-y-6">
        {Object.entries(CONNECTION_PARTS).map(([kind, { Setup }]) => (Setup ? <Setup key={kind} issuer={issuer} /> : null))}
        {connections.map((c) => ({ c, ...CONNECTION_PARTS[c.kind] })).map(({ c, Badges, Details }) => (
          <div key={c.id} id={`connection-${c.id}`} className="scroll-mt-4 rounded-md border border-slate-200 p-4">
            <p className="mb-3 flex flex-wrap items-center gap-2 text-sm font-semibold">
              {c.name} <Badge>{c.kind.toUpperCase()}</Badge> {c.active ? <Badge tone="green">enabled</Badge> : <Badge>disabled</Badge>}
              <Badges connection={c} />
              {c.admission === "any_vouched" ? <Badge tone="amber">admits anyone it vouches for</Badge> : <Badge>admits verified domains only</Badge>}
            </p>
            {added === c.id ? (
              <p role="status" className="mb-3 rounded-md border border-emerald-200 bg-emerald-50 px-3 py-2 text-sm text-emerald-800">
                Connection added.
              </p>
            ) : null}
            <ConnectionStatus connection={c} />
            {extra ? extra(c) : null}
            {Details ? (
              <div className="mb-3">
                <Details connection={c} issuer={issuer} />
              </div>
            ) : null}
            <ConnectionForm save={actions.save} orgId={orgId} issuer={issuer} kind={c.kind} connection={c} roles={roles} readOnly={readOnly} />
          </div>
        ))}
        <div id="new-connection" className="scroll-mt-4 rounded-md border border-dashed border-slate-300 p-4">
          <h3 className="mb-3 text-sm font-semibold">New connection</h3>
          <ProtocolChoice path={path} value={chosen} options={Object.values(CONNECTION_PROTOCOLS).map((p) => ({ value: p.kind, label: p.label }))} />
          <ConnectionForm key={chosen} save={actions.save} orgId={orgId} issuer={issuer} kind={chosen} roles={roles} readOnly={readOnly} />
        </div>
      </div>
    </Card>
  );
}

/** The organization's email domains: each with its state, its TXT record and "Check DNS"; the console's operators may also mark one verified. */
export function DomainsCard({
  orgId,
  domains,
  hasConnection,
  readOnly,
  actions,
}: {
  orgId: string;
  domains: Awaited<ReturnType<typeof listDomains>>;
  hasConnection: boolean;
  readOnly: boolean;
  actions: { add: ServerAction; check: ServerAction; remove: ServerAction; markVerified?: ServerAction };
}) {
  return (
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
                  <ActionForm action={actions.remove} hidden={{ organization_id: orgId, domain_id: d.id }} readOnly={readOnly} className="" label={`Remove ${d.domain}`}>
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
                        action={actions.check}
                        hidden={{ organization_id: orgId, domain_id: d.id, domain: d.domain }}
                        readOnly={readOnly}
                        className=""
                        successMessage="Verified by DNS."
                        label={`Check DNS for ${d.domain}`}
                      >
                        <SubmitButton variant="secondary" size="sm">
                          Check DNS
                        </SubmitButton>
                      </ActionForm>
                      {!d.verifiedAt && actions.markVerified ? (
                        <ActionForm action={actions.markVerified} hidden={{ organization_id: orgId, domain_id: d.id }} readOnly={readOnly} className="" label={`Mark ${d.domain} verified`}>
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
        <ActionForm action={actions.add} hidden={{ organization_id: orgId }} readOnly={readOnly} className="grid items-end gap-3 sm:grid-cols-[1fr_auto]" label="Add domain">
          <Field name="domain" label="Add a domain" placeholder="example.com" />
          <SubmitButton variant="secondary">Add domain</SubmitButton>
        </ActionForm>
      </div>
    </Card>
  );
}

/** The organization's pending invitations, and the form that invites. */
export function InvitationsCard({
  orgId,
  invitations,
  roles,
  applications,
  readOnly,
  actions,
}: {
  orgId: string;
  invitations: PendingInvitation[];
  roles: { id: string; name: string }[];
  /** Applications the invitation may offer to continue to (none in the admin portal). */
  applications: { clientId: string; name: string }[];
  readOnly: boolean;
  actions: { invite: ServerAction; resend: ServerAction; withdraw: ServerAction };
}) {
  return (
    <Card
      id="invitations"
      title="Invitations"
      description="Invite people by email: the link is sent to the address only, valid for 7 days and used once. It creates the account, if there is none, only when it is used."
    >
      <div className="space-y-5">
        {invitations.length === 0 ? (
          <EmptyState title="No pending invitations" />
        ) : (
          <Table caption="Pending invitations" head={["Address", "Roles", "Invited by", "Expires", ""]}>
            {invitations.map((i) => (
              <tr key={i.id} data-testid="pending-invitation">
                <Td>
                  <span className="font-medium">{i.email}</span> {i.administrator ? <Badge tone="green">administrator</Badge> : null}
                </Td>
                <Td>{i.roles.length ? i.roles.map((r) => r.name).join(", ") : <span className="text-slate-500">none</span>}</Td>
                <Td>{i.invitedBy ?? <span className="text-slate-500">{i.invitedByKind === "operator" ? "an operator" : "an administrator"}</span>}</Td>
                <Td>{i.expired ? <Badge tone="red">expired</Badge> : `${i.expiresAt.toISOString().replace("T", " ").slice(0, 16)} UTC`}</Td>
                <Td className="text-right">
                  <div className="flex flex-wrap justify-end gap-2">
                    <ActionForm action={actions.resend} hidden={{ organization_id: orgId, invitation_id: i.id }} readOnly={readOnly} className="" successMessage="Sent again." label={`Send again to ${i.email}`}>
                      <SubmitButton variant="secondary" size="sm">
                        Send again
                      </SubmitButton>
                    </ActionForm>
                    <ActionForm action={actions.withdraw} hidden={{ organization_id: orgId, invitation_id: i.id }} readOnly={readOnly} className="" label={`Withdraw the invitation of ${i.email}`}>
                      <ConfirmButton title={`Withdraw the invitation of ${i.email}?`} message="Its link stops working at once." confirmLabel="Withdraw">
                        Withdraw
                      </ConfirmButton>
                    </ActionForm>
                  </div>
                </Td>
              </tr>
            ))}
          </Table>
        )}
        <ActionForm action={actions.invite} hidden={{ organization_id: orgId }} readOnly={readOnly} successMessage="Invitation sent." label="Invite">
          <Field name="email" label="Invite by email" type="email" placeholder="name@example.com" />
          {roles.length > 0 ? (
            <CheckboxGroup name="role_ids" legend="Roles in this organization" options={roles.map((r) => ({ value: r.id, label: r.name }))} />
          ) : null}
          <Checkbox name="administrator" label="Administrator of the organization" hint="They may invite people to this organization and withdraw its invitations." />
          {applications.length > 0 ? (
            <Select
              name="client_id"
              label="Application to continue to"
              defaultValue=""
              options={[{ value: "", label: "None" }, ...applications.map((a) => ({ value: a.clientId, label: a.name }))]}
              hint="Offered on the confirmation page once the invitation is accepted."
            />
          ) : null}
          <SubmitButton variant="secondary">Send invitation</SubmitButton>
        </ActionForm>
      </div>
    </Card>
  );
}
