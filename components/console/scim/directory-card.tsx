import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { CopyButton } from "@/components/ui/copy-button";
import { ActionForm, Checkbox, Field, Select, SubmitButton, TextArea } from "@/components/ui/form";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { formatUtc } from "@/components/ui/time";
import type { ServerAction } from "@/lib/forms/action-state";
import type { DirectoryView } from "@/lib/organizations/scim/console";
import { MAX_TOKEN_OVERLAP_HOURS } from "@/lib/organizations/scim/directory";
import { ScimTokenReveal } from "./token-reveal";

export interface DirectoryActions {
  save: ServerAction;
  issue: ServerAction;
  revoke: ServerAction;
}

/**
 * An organization's directory (SCIM provisioning) on its console page: the base URL to paste into
 * the identity provider, the settings, the tokens (one issued is shown once) and the last requests.
 */
export function DirectoryCard({ organizationId, view, actions, readOnly }: { organizationId: string; view: DirectoryView; actions: DirectoryActions; readOnly: boolean }) {
  const d = view.directory;
  const hidden = { organization_id: organizationId };
  return (
    <Card
      id="directory"
      title="Directory provisioning (SCIM)"
      description="The organization's identity provider (Microsoft Entra, Okta, …) creates, updates and deactivates its people here. A deactivated user loses their sessions at once."
    >
      <div className="space-y-6">
        <div>
          <p className="mb-1 text-sm font-medium text-slate-700">
            SCIM base URL {d ? d.enabled ? <Badge tone="green">on</Badge> : <Badge>off</Badge> : <Badge>not set up</Badge>}
          </p>
          <div className="flex flex-wrap items-center gap-2">
            <code data-testid="scim-base-url" className="min-w-0 flex-1 break-all rounded border border-slate-200 bg-slate-50 px-2 py-1.5 font-mono text-xs">
              {view.baseUrl}
            </code>
            <CopyButton value={view.baseUrl} label="Copy base URL" />
          </div>
        </div>
        <ActionForm action={actions.save} hidden={hidden} readOnly={readOnly} successMessage="Saved." label="Directory settings">
          <Checkbox name="enabled" label="Provisioning on" defaultChecked={d?.enabled ?? true} hint="Off: every SCIM request is refused; what was provisioned stays as it is." />
          <div className="grid gap-4 sm:grid-cols-2">
            <Select
              name="connection_id"
              label="Users sign in through"
              defaultValue={d?.connectionId ?? ""}
              options={[{ value: "", label: "No connection" }, ...view.connections.map((c) => ({ value: c.id, label: c.name }))]}
              hint="Each provisioned user's identity at this connection is made at once, keyed by the attribute below."
            />
            <Select
              name="subject_attribute"
              label="The connection's subject is"
              defaultValue={d?.subjectAttribute ?? "externalId"}
              options={[
                { value: "externalId", label: "externalId (the directory's object id)" },
                { value: "userName", label: "userName (often the user principal name)" },
              ]}
              hint="The SCIM attribute whose value equals the subject the connection signs the user in with (its sub or NameID). Accounts are never matched by email alone."
            />
          </div>
          <Checkbox name="local_sign_in" label="Allow local sign-in too" defaultChecked={d?.localSignIn ?? false} hint="Off: accounts the directory created sign in only through the connection." />
          <Checkbox
            name="any_domain"
            label="Provision addresses outside the verified domains"
            defaultChecked={d?.anyDomain ?? false}
            hint="Off: only addresses in this organization's verified domains. Never an address in another organization's verified domain."
          />
          <TextArea
            name="group_roles"
            label="Groups to roles"
            optional
            rows={4}
            defaultValue={view.groupRolesText}
            placeholder={"Engineering: writer\nIT Admins: admin, reader"}
            hint="One line per group: its display name, a colon, the roles (by name) its members get in this organization."
          />
          <SubmitButton variant="secondary">{d ? "Save" : "Turn provisioning on"}</SubmitButton>
        </ActionForm>
        {d ? (
          <div className="space-y-4">
            <h3 className="text-sm font-semibold text-slate-900">Tokens</h3>
            {view.tokens.length === 0 ? (
              <EmptyState title="No token yet">Issue one and paste it into the identity provider.</EmptyState>
            ) : (
              <Table caption="SCIM tokens" head={["Issued", "Status", "Expires", "Last used", ""]}>
                {view.tokens.map((t) => (
                  <tr key={t.id}>
                    <Td>{formatUtc(t.createdAt)}</Td>
                    <Td>{t.active ? <Badge tone="green">works</Badge> : t.revokedAt ? <Badge tone="red">revoked</Badge> : <Badge>expired</Badge>}</Td>
                    <Td>{t.expiresAt ? formatUtc(t.expiresAt) : "—"}</Td>
                    <Td>{formatUtc(t.lastUsedAt)}</Td>
                    <Td className="text-right">
                      {t.active ? (
                        <ActionForm action={actions.revoke} hidden={{ ...hidden, token_id: t.id }} readOnly={readOnly} className="" label="Revoke token">
                          <ConfirmButton title="Revoke this token?" message="The identity provider's requests with it are refused at once." confirmLabel="Revoke">
                            Revoke
                          </ConfirmButton>
                        </ActionForm>
                      ) : null}
                    </Td>
                  </tr>
                ))}
              </Table>
            )}
            <ActionForm action={actions.issue} hidden={hidden} readOnly={readOnly} label="Issue token">
              <ScimTokenReveal />
              <Field
                name="overlap_hours"
                label="The working tokens keep working for (hours)"
                type="number"
                min={0}
                max={MAX_TOKEN_OVERLAP_HOURS}
                defaultValue={0}
                hint="0 ends them at once; up to 24 while you paste the new token into the identity provider."
              />
              <SubmitButton variant="secondary">Issue token</SubmitButton>
            </ActionForm>
            <h3 className="text-sm font-semibold text-slate-900">Last requests</h3>
            {view.requests.length === 0 ? (
              <EmptyState title="No requests yet" />
            ) : (
              <Table caption="The directory's last requests" head={["Time", "Request", "Status", "Refusal"]}>
                {view.requests.map((r, i) => (
                  <tr key={i}>
                    <Td>{formatUtc(r.at)}</Td>
                    <Td>
                      <code className="font-mono text-xs">
                        {r.method} {r.path}
                      </code>
                    </Td>
                    <Td>{r.status < 400 ? <Badge tone="green">{r.status}</Badge> : <Badge tone="red">{r.status}</Badge>}</Td>
                    <Td className="text-xs text-slate-600">{r.detail ?? ""}</Td>
                  </tr>
                ))}
              </Table>
            )}
          </div>
        ) : null}
      </div>
    </Card>
  );
}
