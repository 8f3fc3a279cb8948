import type { Metadata } from "next";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm, Checkbox, Field, Select, SubmitButton, TextArea } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { EmptyState } from "@/components/ui/table";
import { CopyValue } from "@/components/console/federation/txt-record";
import { roleAtLeast } from "@/lib/console/authz";
import { federationCallbackUri } from "@/lib/console/organizations";
import { listSocialProviders, PRESET_LABELS, presetFields, type ProviderField, type SocialProviderInfo } from "@/lib/console/social-providers";
import { SOCIAL_PRESETS, type SocialPreset } from "@/db/schema";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../_lib/action-for";
import { pageAccess } from "../../../../_lib/session";

export const metadata: Metadata = { title: "Social sign-in" };

const FIELD_LABELS: Record<ProviderField, { label: string; hint?: string; placeholder?: string }> = {
  tenant: { label: "Tenant", hint: "The directory (tenant) id, a GUID, or one of its verified domains. One tenant only: common, organizations and consumers are not accepted.", placeholder: "contoso.onmicrosoft.com" },
  team_id: { label: "Team id", hint: "Your Apple Developer team id." },
  key_id: { label: "Key id", hint: "The id of the Sign in with Apple private key." },
  issuer: { label: "Issuer", hint: "Overrides the preset's issuer (discovery at <issuer>/.well-known/openid-configuration; GitHub: the name its identities are recorded under).", placeholder: "https://" },
  authorization_endpoint: { label: "Authorization endpoint", placeholder: "https://" },
  token_endpoint: { label: "Token endpoint", placeholder: "https://" },
  userinfo_endpoint: { label: "UserInfo endpoint", placeholder: "https://" },
  api_base: { label: "API base", hint: "GitHub Enterprise Server: https://<host>/api/v3.", placeholder: "https://api.github.com" },
};

/** Settings an administrator usually needs (the rest sit under Advanced). */
const ESSENTIAL: readonly ProviderField[] = ["tenant", "team_id", "key_id"];

function secretLabel(preset: SocialPreset) {
  return preset === "apple" ? "Private key (PEM)" : "Client secret";
}

function ProviderFields({ preset, provider }: { preset: SocialPreset; provider?: SocialProviderInfo }) {
  const fields = presetFields(preset);
  const essential = fields.filter((f) => ESSENTIAL.includes(f) || (preset === "oidc" && f === "issuer"));
  const advanced = fields.filter((f) => !essential.includes(f));
  const required = (f: ProviderField) => (preset === "oidc" && f === "issuer") || (preset === "apple" && (f === "team_id" || f === "key_id")) || (preset === "microsoft" && f === "tenant");
  const input = (f: ProviderField) => <Field key={f} name={f} label={FIELD_LABELS[f].label} optional={!required(f)} defaultValue={provider?.config[f] ?? ""} hint={FIELD_LABELS[f].hint} placeholder={FIELD_LABELS[f].placeholder} />;
  const secretHint = provider?.hasSecret ? "Set (stored encrypted, never shown). Leave empty to keep it." : "Not set. Stored encrypted; never shown again.";
  return (
    <>
      <div className="grid gap-4 sm:grid-cols-2">
        <Field name="name" label="Button label" defaultValue={provider?.name ?? PRESET_LABELS[preset]} />
        <Field name="client_id" label={preset === "apple" ? "Client id (Services ID)" : "Client id"} defaultValue={provider?.clientId} />
        {essential.map(input)}
      </div>
      {preset === "apple" ? (
        <TextArea name="client_secret" label={secretLabel(preset)} optional={!!provider} rows={4} placeholder="-----BEGIN PRIVATE KEY-----" hint={secretHint} />
      ) : (
        <Field name="client_secret" label={secretLabel(preset)} type="password" autoComplete="new-password" optional={!!provider} hint={secretHint} />
      )}
      {advanced.length > 0 ? (
        <details className="rounded-md border border-slate-200 px-3 py-2">
          <summary className="cursor-pointer text-sm font-medium text-slate-700">Advanced: endpoints</summary>
          <div className="mt-3 grid gap-4 sm:grid-cols-2">{advanced.map(input)}</div>
        </details>
      ) : null}
    </>
  );
}

export default async function SocialProvidersPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/social`);
  const service = await getService();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const readOnly = !roleAtLeast(access.role, "admin");
  const providers = await listSocialProviders(service, ws);
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Social sign-in" }]}
        title="Social sign-in"
        description="Sign-in buttons for Google, Microsoft, Apple, GitHub or any OpenID Connect provider. Each application chooses which ones it offers (Applications → Social sign-in)."
      />
      <div className="space-y-6">
        <Card title="Redirect URI">
          <p className="mb-2 text-sm text-slate-700">Register this redirect URI with each provider:</p>
          <CopyValue label="URI" value={federationCallbackUri(service, ws)} />
        </Card>
        <Card id="providers" title="Providers" description="Buttons appear on the sign-in page in this order.">
          {providers.length === 0 ? (
            <EmptyState title="No providers yet">Add one below.</EmptyState>
          ) : (
            <ol className="space-y-4">
              {providers.map((p, i) => (
                <li key={p.id} className="rounded-md border border-slate-200 p-4">
                  <div className="mb-3 flex flex-wrap items-center justify-between gap-2">
                    <p className="flex flex-wrap items-center gap-2 text-sm font-semibold">
                      {p.name} <Badge>{PRESET_LABELS[p.preset]}</Badge> <code className="font-mono text-xs text-slate-500">{p.key}</code>
                      {p.enabled ? <Badge tone="green">enabled</Badge> : <Badge>disabled</Badge>}
                      {p.hasSecret ? <Badge tone="slate">secret set</Badge> : <Badge tone="amber">secret not set</Badge>}
                    </p>
                    <div className="flex flex-wrap gap-2">
                      <ActionForm action={actionFor("moveSocialProvider", ws)} hidden={{ provider_id: p.id, direction: "up" }} readOnly={readOnly || i === 0} className="" label={`Move ${p.name} up`}>
                        <SubmitButton variant="secondary" size="sm">
                          Move up
                        </SubmitButton>
                      </ActionForm>
                      <ActionForm action={actionFor("moveSocialProvider", ws)} hidden={{ provider_id: p.id, direction: "down" }} readOnly={readOnly || i === providers.length - 1} className="" label={`Move ${p.name} down`}>
                        <SubmitButton variant="secondary" size="sm">
                          Move down
                        </SubmitButton>
                      </ActionForm>
                      <ActionForm action={actionFor("removeSocialProvider", ws)} hidden={{ provider_id: p.id }} readOnly={readOnly} className="" label={`Remove ${p.name}`}>
                        <ConfirmButton title={`Remove ${p.name}?`} message="Applications stop offering this button. Users who signed in with it keep their accounts but cannot use this provider until it is added again." confirmLabel="Remove">
                          Remove
                        </ConfirmButton>
                      </ActionForm>
                    </div>
                  </div>
                  <ActionForm action={actionFor("updateSocialProvider", ws)} hidden={{ provider_id: p.id }} readOnly={readOnly} successMessage="Saved." label={`Provider ${p.name}`}>
                    <ProviderFields preset={p.preset} provider={p} />
                    <Checkbox name="enabled" label="Enabled" defaultChecked={p.enabled} />
                    <SubmitButton variant="secondary">Save provider</SubmitButton>
                  </ActionForm>
                </li>
              ))}
            </ol>
          )}
        </Card>
        <Card id="add" title="Add a provider" description="Choose the kind of provider; its specific settings can be changed after adding it.">
          <div className="space-y-3">
            {SOCIAL_PRESETS.map((preset) => (
              <details key={preset} className="rounded-md border border-dashed border-slate-300 p-4" open={providers.length === 0 && preset === "google"}>
                <summary className="cursor-pointer text-sm font-semibold">Add {PRESET_LABELS[preset]}</summary>
                <div className="mt-3">
                <ActionForm action={actionFor("createSocialProvider", ws)} hidden={{ preset }} readOnly={readOnly} successMessage="Added." label={`Add ${PRESET_LABELS[preset]}`}>
                  <Field name="key" label="Key" defaultValue={preset === "oidc" ? "" : preset} hint="Identifies the provider in the workspace file; a–z, 0–9 and -. Cannot be changed." />
                  <ProviderFields preset={preset} />
                  <Checkbox name="enabled" label="Enabled" defaultChecked />
                  <SubmitButton variant="secondary">Add {PRESET_LABELS[preset]}</SubmitButton>
                </ActionForm>
                </div>
              </details>
            ))}
          </div>
        </Card>
      </div>
    </>
  );
}
