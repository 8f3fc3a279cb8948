import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm, Checkbox, CheckboxGroup, Field, Select, SubmitButton, TextArea } from "@/components/ui/form";
import { Notice, PageHeader } from "@/components/ui/page-header";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { Time } from "@/components/ui/time";
import { PolicySummary } from "@/components/console/policy-summary";
import { SecretReveal } from "@/components/console/secret-reveal";
import { ConfirmedAction } from "@/components/console/confirmed-action";
import { ConnectGuide } from "@/components/console/connect-guide";
import { CreatedSecret } from "@/components/console/created-secret";
import { CopyButton } from "@/components/ui/copy-button";
import { applicationFootprint, applicationSecrets, applicationSocialProviderIds, getApplication, typeLabels } from "@/lib/console/applications";
import { OtherIssuers } from "@/components/hostnames/other-issuers";
import { workspaceIssuers } from "@/lib/hostnames/console";
import { listSocialProviders, PRESET_LABELS } from "@/lib/console/social-providers";
import { roleAtLeast } from "@/lib/console/authz";
import { FIRST_FACTOR_LABELS, getApplicationPolicy, MFA_LABELS, PASSKEY_ENROLLMENT_LABELS, policyRows } from "@/lib/console/policy";
import { warnsOfExpiry } from "@/lib/console/secret-expiry";
import { hasRedirectUris, REDIRECT_URIS_HINT } from "@/lib/console/redirect-uris-field";
import { FIRST_FACTORS, MFA_MODES, PASSKEY_ENROLLMENT } from "@/lib/authn/policy";
import { listApiGrants, listApis } from "@/lib/authz/model";
import { MAX_ROTATION_OVERLAP_HOURS } from "@/lib/clients/secrets";
import { IDENTITY_SCOPES } from "@/lib/workspaces/document";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../../_lib/action-for";
import { pageAccess } from "../../../../../_lib/session";
import { countOf } from "@/lib/i18n/plural";

export const metadata: Metadata = { title: "Application" };

export default async function ApplicationPage({ params }: { params: Promise<{ workspace: string; clientId: string }> }) {
  const { workspace, clientId: rawClientId } = await params;
  const clientId = decodeURIComponent(rawClientId);
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/applications/${rawClientId}`);
  const service = await getService();
  const app = await getApplication(service, access.workspace.id, clientId);
  if (!app) notFound();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const readOnly = !roleAtLeast(access.role, "admin");
  const now = service.clock.now();
  const confidential = app.type !== "PUBLIC";
  const [secrets, apis, grants, policy, socialProviders, offeredProviders, footprint, issuers] = await Promise.all([
    confidential ? applicationSecrets(service, access, app.clientId) : Promise.resolve([]),
    listApis(service.db, ws),
    listApiGrants(service.db, ws, { clientId: app.clientId }),
    getApplicationPolicy(service, ws, app.clientId),
    listSocialProviders(service, ws),
    applicationSocialProviderIds(service, ws, app.id),
    applicationFootprint(service.db, ws, app.id, now),
    workspaceIssuers(service, ws),
  ]);
  const issuer = issuers.primary;
  const firstGrant = grants[0];
  const activeSecrets = secrets.filter((s) => s.status === "active");
  const hidden = { client_id: app.clientId };
  return (
    <>
      <PageHeader
        crumbs={[
          { label: "Workspaces", href: "/console" },
          { label: access.workspace.name, href: base },
          { label: "Applications", href: `${base}/applications` },
          { label: app.name },
        ]}
        title={
          <span className="flex flex-wrap items-center gap-2">
            {app.name} <Badge>{typeLabels[app.type]}</Badge>
            {app.active ? <Badge tone="green">enabled</Badge> : <Badge tone="red">disabled</Badge>}
          </span>
        }
      />
      <div className="space-y-6">
        {!app.active ? <Notice tone="warning">This application is disabled: it cannot sign anyone in, and every token it holds fails the checks.</Notice> : null}
        <Card id="connect" title="Connect your application" description="What your code needs: the client id, the issuer (discovery finds everything else) and, for confidential applications, the secret.">
          <div className="space-y-4">
            <div className="grid gap-3 lg:grid-cols-2">
              <div className="rounded-md border border-slate-200 p-3">
                <p className="text-sm text-slate-600">Client id</p>
                <div className="mt-1 flex flex-wrap items-center gap-2">
                  <code data-testid="client-id" className="break-all font-mono text-sm text-slate-900">
                    {app.clientId}
                  </code>
                  <CopyButton value={app.clientId} label="Copy client id" />
                </div>
              </div>
              {confidential ? (
                <CreatedSecret clientId={app.clientId} />
              ) : (
                <div className="rounded-md border border-slate-200 p-3 text-sm text-slate-600">No client secret: a public application proves itself with PKCE.</div>
              )}
            </div>
            <ConnectGuide
              type={app.type}
              clientId={app.clientId}
              issuer={issuer}
              redirectUri={app.redirectUris[0] ?? null}
              api={firstGrant ? { audience: firstGrant.audience, permissions: firstGrant.permissions } : null}
            />
            <OtherIssuers issuers={issuers.others} hostnamesHref={`${base}/hostnames`} />
          </div>
        </Card>
        <Card title="Settings" id="settings">
          <ActionForm action={actionFor("updateApplication", ws)} hidden={hidden} readOnly={readOnly} successMessage="Saved." label="Application settings">
            <Field name="name" label="Name" defaultValue={app.name} />
            {hasRedirectUris(app.type) ? (
              <>
                <TextArea name="redirect_uris" label="Redirect URIs" defaultValue={app.redirectUris.join("\n")} hint={REDIRECT_URIS_HINT} />
                <TextArea name="post_logout_redirect_uris" label="Post-logout redirect URIs" optional defaultValue={app.postLogoutRedirectUris.join("\n")} />
                <Field
                  name="home_uri"
                  label="Home page"
                  optional
                  defaultValue={app.homeUri ?? ""}
                  hint="Where the account-security portal's way back (“Back to …”, “Done”) goes when no handoff return address applies. On the origin of the first redirect URI; left empty, that origin."
                />
                {app.type === "PUBLIC" ? (
                  <TextArea name="allowed_origins" label="Allowed browser origins" optional defaultValue={app.allowedOrigins.join("\n")} hint="Origins only (scheme://host[:port])." />
                ) : null}
                <CheckboxGroup name="identity_scopes" legend="Identity scopes" options={IDENTITY_SCOPES.map((s) => ({ value: s, label: s }))} defaultValues={app.identityScopes} />
                <Checkbox name="account_security" label="Offer the account-security portal" defaultChecked={app.accountSecurity} />
              </>
            ) : null}
            <SubmitButton>Save settings</SubmitButton>
          </ActionForm>
        </Card>

        {app.type === "WEB_CONFIDENTIAL" ? (
          <Card
            id="handoff"
            title="Account-security handoff"
            description="Where the backend handoff sends the browser. The application registers these itself (POST /auth/account/configuration); they are shown here read-only."
          >
            {app.handoffCallbackUri && app.handoffReturnUri ? (
              <dl className="grid gap-x-4 gap-y-2 text-sm sm:grid-cols-[10rem_1fr]">
                <dt className="text-slate-500">Callback URI</dt>
                <dd className="break-all font-mono">{app.handoffCallbackUri}</dd>
                <dt className="text-slate-500">Return URI</dt>
                <dd className="break-all font-mono">{app.handoffReturnUri}</dd>
                <dt className="text-slate-500">Version</dt>
                <dd className="font-mono">{app.handoffVersion}</dd>
              </dl>
            ) : (
              <p className="text-sm text-slate-500">Not configured: launches answer NOT_AVAILABLE until the application registers its destinations.</p>
            )}
            {!app.accountSecurity ? <p className="mt-3 text-sm text-slate-500">The portal is switched off for this application (Settings above).</p> : null}
          </Card>
        ) : null}

        {policy ? (
          <Card
            id="authentication"
            title="Authentication policy"
            description={
              <>
                Each part inherits the{" "}
                <Link prefetch={false} href={`${base}/authentication`} className="text-indigo-700 underline hover:text-indigo-900">
                  workspace&apos;s policy
                </Link>{" "}
                unless this application overrides it.
              </>
            }
          >
            <div className="grid gap-6 lg:grid-cols-2">
              <ActionForm action={actionFor("setApplicationPolicy", ws)} hidden={hidden} readOnly={readOnly} successMessage="Saved." label="Application authentication policy">
                <Select
                  name="first_factors_mode"
                  label="Ways to sign in"
                  options={[
                    { value: "inherit", label: "Inherit from the workspace" },
                    { value: "override", label: "Only the ones checked below" },
                  ]}
                  defaultValue={policy.overrides.firstFactors ? "override" : "inherit"}
                />
                <CheckboxGroup
                  name="first_factors"
                  legend="Allowed when overriding"
                  options={FIRST_FACTORS.map((f) => ({ value: f, label: FIRST_FACTOR_LABELS[f] }))}
                  defaultValues={policy.overrides.firstFactors ?? policy.effective.firstFactors}
                />
                <Select
                  name="mfa"
                  label="Multi-factor authentication"
                  options={[{ value: "inherit", label: "Inherit from the workspace" }, ...MFA_MODES.map((m) => ({ value: m, label: MFA_LABELS[m] }))]}
                  defaultValue={policy.overrides.mfa ?? "inherit"}
                />
                <Select
                  name="passkey_enrollment"
                  label="Passkey enrolment"
                  options={[{ value: "inherit", label: "Inherit from the workspace" }, ...PASSKEY_ENROLLMENT.map((m) => ({ value: m, label: PASSKEY_ENROLLMENT_LABELS[m] }))]}
                  defaultValue={policy.overrides.passkeyEnrollment ?? "inherit"}
                />
                <Select
                  name="sign_up"
                  label="Self-service sign-up"
                  options={[
                    { value: "inherit", label: "Inherit from the workspace" },
                    { value: "on", label: "On" },
                    { value: "off", label: "Off" },
                  ]}
                  defaultValue={policy.overrides.signUp === undefined ? "inherit" : policy.overrides.signUp ? "on" : "off"}
                />
                <SubmitButton>Save policy</SubmitButton>
              </ActionForm>
              <div>
                <h3 className="mb-3 text-sm font-semibold text-slate-900">In force for this application</h3>
                <PolicySummary label="Effective policy" rows={policyRows(policy.effective, policy.overrides)} />
              </div>
            </div>
          </Card>
        ) : null}

        {app.type !== "M2M" ? (
          <Card
            id="social"
            title="Social sign-in"
            description={
              <>
                The buttons this application&apos;s sign-in page offers, in the{" "}
                <Link prefetch={false} href={`${base}/social`} className="text-indigo-700 underline hover:text-indigo-900">
                  workspace&apos;s order
                </Link>
                .
              </>
            }
          >
            {socialProviders.length === 0 ? (
              <EmptyState title="No social providers in this workspace">Add one under Social sign-in first.</EmptyState>
            ) : (
              <ActionForm action={actionFor("setApplicationSocialProviders", ws)} hidden={hidden} readOnly={readOnly} successMessage="Saved." label="Social sign-in">
                <CheckboxGroup
                  name="provider_ids"
                  legend="Offer these providers"
                  options={socialProviders.map((p) => ({ value: p.id, label: `${p.name} (${PRESET_LABELS[p.preset]}${p.enabled ? "" : ", disabled"})` }))}
                  defaultValues={offeredProviders}
                  hint="A disabled provider is not shown until it is enabled again."
                />
                <SubmitButton variant="secondary">Save social sign-in</SubmitButton>
              </ActionForm>
            )}
          </Card>
        ) : null}

        <Card
          id="status"
          title="Disable or delete"
          description={
            app.active
              ? "Disabling is reversible; deleting is not."
              : "The application is disabled. Enable it to let it sign users in again: tokens and grants that have not expired work again."
          }
        >
          <div className="space-y-4">
            <ActionForm action={actionFor("setApplicationActive", ws)} hidden={{ ...hidden, active: app.active ? "false" : "true" }} readOnly={readOnly} label="Application status">
              <div>
                {app.active ? (
                  <ConfirmButton
                    title={`Disable ${app.name}?`}
                    message={`No one can sign in to it, and every token and grant it holds (${countOf(footprint.grants, "grant", "grants")}, ${countOf(footprint.accessTokens, "unexpired user access token", "unexpired user access tokens")}, and every service token, which is not stored and so not counted) fails introspection, UserInfo, the permission check and refresh while it is disabled. Nothing is deleted: enabling it again restores those that have not expired.`}
                    confirmLabel="Disable"
                    size="md"
                  >
                    Disable application
                  </ConfirmButton>
                ) : (
                  <SubmitButton variant="secondary">Enable application</SubmitButton>
                )}
              </div>
            </ActionForm>
            <ConfirmedAction
              action={actionFor("deleteApplication", ws)}
              hidden={hidden}
              readOnly={readOnly}
              opener="Delete application…"
              title={`Delete ${app.name} for good?`}
              consequences={
                <>
                  <p>
                    This removes the application{confidential ? ", its client secrets" : ""} and its API access, and ends every grant it holds ({footprint.grants}) with their refresh
                    tokens, its {countOf(footprint.accessTokens, "unexpired user access token", "unexpired user access tokens")}, and every service token it was issued: from now on introspection says inactive, UserInfo and the permission check refuse them, and
                    refresh fails.
                  </p>
                  <p>Users&apos; hosted sessions stay (they serve other applications). A new application with the same client id inherits nothing.</p>
                </>
              }
              confirmValue={app.clientId}
              confirmWhat="the client id"
              submitLabel="Delete application"
            />
          </div>
        </Card>

        {confidential ? (
          <Card
            id="secrets"
            title="Client secrets"
            description="At most two are active at a time. A secret is shown once when it is created; the list never shows it again."
          >
            <div className="space-y-5">
              {secrets.length === 0 ? (
                <EmptyState title="No secrets">Create one so the application can authenticate.</EmptyState>
              ) : (
                <Table caption="Client secrets" head={["Secret", "Status", "Created", "Expires", "Last used", ""]}>
                  {secrets.map((s) => {
                    const soon = s.status === "active" && warnsOfExpiry(s, activeSecrets, now);
                    return (
                      <tr key={s.id}>
                        <Td mono>{s.id.slice(0, 8)}…</Td>
                        <Td>
                          {s.status === "active" ? <Badge tone={soon ? "amber" : "green"}>{soon ? "expires soon" : "active"}</Badge> : <Badge tone={s.status === "revoked" ? "red" : "neutral"}>{s.status}</Badge>}
                        </Td>
                        <Td>
                          <Time value={s.createdAt} />
                        </Td>
                        <Td>
                          <Time value={s.revokedAt ?? s.expiresAt} now={now} />
                        </Td>
                        <Td>
                          <Time value={s.lastUsedAt} />
                        </Td>
                        <Td>
                          {s.status === "active" ? (
                            <div className="flex flex-wrap gap-2">
                              {activeSecrets.length > 1 ? (
                                <ActionForm action={actionFor("expireSecretNow", ws)} hidden={{ ...hidden, secret_id: s.id }} readOnly={readOnly} className="" label="End overlap">
                                  <ConfirmButton
                                    title="Let this secret expire now?"
                                    message="Use this when every deployment has the new secret. Requests with this one fail from now on; user sign-ins obtained with it stay valid."
                                    confirmLabel="Expire now"
                                    variant="secondary"
                                  >
                                    Expire now
                                  </ConfirmButton>
                                </ActionForm>
                              ) : null}
                              <ActionForm action={actionFor("revokeSecret", ws)} hidden={{ ...hidden, secret_id: s.id }} readOnly={readOnly} className="" label="Revoke secret">
                                <ConfirmButton title="Revoke this secret?" message="It stops working immediately, and machine tokens obtained with it end too." confirmLabel="Revoke">
                                  Revoke
                                </ConfirmButton>
                              </ActionForm>
                            </div>
                          ) : null}
                        </Td>
                      </tr>
                    );
                  })}
                </Table>
              )}
              <div className="grid gap-6 md:grid-cols-2">
                <div className="rounded-md border border-slate-200 p-4">
                  <h3 className="mb-3 text-sm font-semibold text-slate-900">Rotate</h3>
                  <ActionForm action={actionFor("rotateSecret", ws)} hidden={hidden} readOnly={readOnly} label="Rotate secret">
                    <SecretReveal />
                    <Field
                      name="overlap_hours"
                      label="Overlap (hours)"
                      type="number"
                      min={0}
                      max={MAX_ROTATION_OVERLAP_HOURS}
                      defaultValue={24}
                      hint="0 replaces at once; up to 24 keeps the newest old secret valid that long while you deploy the new one."
                    />
                    <Field name="lifetime_days" label="Lifetime of the new secret (days)" type="number" min={1} max={365} defaultValue={app.secretLifetimeDays} />
                    <SubmitButton>Rotate secret</SubmitButton>
                  </ActionForm>
                </div>
                <div className="rounded-md border border-slate-200 p-4">
                  <h3 className="mb-3 text-sm font-semibold text-slate-900">Add a secret</h3>
                  <ActionForm action={actionFor("createSecret", ws)} hidden={hidden} readOnly={readOnly} label="Create secret">
                    <SecretReveal />
                    <Field name="lifetime_days" label="Lifetime (days)" type="number" min={1} max={365} defaultValue={app.secretLifetimeDays} hint="1–365 days. Refused while two secrets are active." />
                    <SubmitButton variant="secondary">Create secret</SubmitButton>
                  </ActionForm>
                </div>
              </div>
            </div>
          </Card>
        ) : null}

        <Card
          id="api-grants"
          title="API access"
          description={
            app.type === "M2M"
              ? "The APIs this machine-to-machine application may call, and the permissions it may obtain with client credentials."
              : "The APIs this application may request for its users, and the permissions it may request (users still need a role that grants them)."
          }
        >
          {apis.length === 0 ? (
            <EmptyState title="No APIs in this workspace">Define an API under APIs first.</EmptyState>
          ) : (
            <div className="divide-y divide-slate-100">
              {apis.map((api) => {
                const grant = grants.find((g) => g.audience === api.audience);
                return (
                  <div key={api.id} className="py-4 first:pt-0 last:pb-0">
                    <ActionForm action={actionFor("setClientApiGrant", ws)} hidden={{ ...hidden, audience: api.audience }} readOnly={readOnly} successMessage="Saved." label={`Access to ${api.name}`}>
                      <div className="flex flex-wrap items-center gap-2">
                        <span className="font-medium">{api.name}</span>
                        <code className="font-mono text-xs text-slate-500">{api.audience}</code>
                        {!api.active ? <Badge tone="red">inactive API</Badge> : null}
                      </div>
                      <Checkbox name="granted" label="Granted" defaultChecked={!!grant} />
                      {api.permissions.length > 0 ? (
                        <CheckboxGroup name="permissions" legend="Permissions" options={api.permissions.map((p) => ({ value: p, label: p }))} defaultValues={grant?.permissions ?? []} />
                      ) : (
                        <p className="text-sm text-slate-500">This API defines no permissions yet.</p>
                      )}
                      <SubmitButton variant="secondary" size="sm">
                        Save access
                      </SubmitButton>
                    </ActionForm>
                  </div>
                );
              })}
            </div>
          )}
        </Card>
      </div>
    </>
  );
}
