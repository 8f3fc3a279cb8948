import { Card } from "@/components/ui/card";
import { ActionForm, Checkbox, CheckboxGroup, Field, SubmitButton, SwitchList, TextArea } from "@/components/ui/form";
import { applicationOptionsFor, type ApplicationRow } from "@/lib/console/applications";
import { hasRedirectUris, REDIRECT_URIS_HINT } from "@/lib/console/redirect-uris-field";
import { IDENTITY_SCOPES } from "@/lib/workspaces/document";
import { actionFor } from "../../../../../_lib/action-for";

/** The application's name and, for applications that sign users in, its addresses, scopes and portal switch. */
export function SettingsCard({ app, ws, readOnly }: { app: ApplicationRow; ws: string; readOnly: boolean }) {
  return (
    <Card title="Settings" id="settings">
      <ActionForm action={actionFor("updateApplication", ws)} hidden={{ client_id: app.clientId }} readOnly={readOnly} successMessage="Saved." label="Application settings">
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
  );
}

/**
 * The protocol options the features declare (lib/surfaces/application-options.ts) that this
 * application's type can switch on; nothing when there are none.
 */
export function ProtocolCard({ app, ws, readOnly }: { app: ApplicationRow; ws: string; readOnly: boolean }) {
  const offered = applicationOptionsFor(app.type);
  if (offered.length === 0) return null;
  return (
    <Card title="Protocol" id="protocol" description="Standards this application's clients may (or must) use besides the authorization code flow. Each is off until switched on here or in the workspace file.">
      <ActionForm action={actionFor("setApplicationOptions", ws)} hidden={{ client_id: app.clientId }} readOnly={readOnly} successMessage="Saved." label="Protocol options">
        <SwitchList name="options" legend="Protocol options" options={offered.map((o) => ({ value: o.key, label: o.label, hint: o.hint }))} defaultValues={offered.filter((o) => app.options[o.key] === true).map((o) => o.key)} />
        <SubmitButton>Save protocol options</SubmitButton>
      </ActionForm>
    </Card>
  );
}

/** Where the account-security handoff sends the browser (web confidential applications), read-only. */
export function HandoffCard({ app }: { app: ApplicationRow }) {
  return (
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
  );
}
