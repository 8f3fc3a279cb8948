import type { Metadata } from "next";
import Link from "next/link";
import { Card } from "@/components/ui/card";
import { ActionForm, Checkbox, CheckboxGroup, Field, Select, SubmitButton, TextArea } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { SecretReveal } from "@/components/console/secret-reveal";
import { applicationKinds } from "@/lib/console/applications";
import { IDENTITY_SCOPES } from "@/lib/workspaces/document";
import { DEFAULT_SECRET_LIFETIME_DAYS } from "@/lib/clients/secrets";
import { actionFor } from "../../../../../_lib/action-for";
import { pageAccess } from "../../../../../_lib/session";

export const metadata: Metadata = { title: "New application" };

export default async function NewApplicationPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "admin", `/console/w/${workspace}/applications/new`);
  const base = `/console/w/${access.workspace.id}`;
  return (
    <>
      <PageHeader
        crumbs={[
          { label: "Workspaces", href: "/console" },
          { label: access.workspace.name, href: base },
          { label: "Applications", href: `${base}/applications` },
          { label: "New" },
        ]}
        title="New application"
      />
      <Card>
        <ActionForm action={actionFor("createApplication", access.workspace.id)} label="New application">
          <SecretReveal>
            <p className="mt-2">
              <Link prefetch={false} className="font-medium underline" href={`${base}/applications`}>
                Go to the applications
              </Link>
            </p>
          </SecretReveal>
          <div className="grid gap-4 sm:grid-cols-2">
            <Select
              name="kind"
              label="Kind"
              defaultValue="spa"
              options={Object.entries(applicationKinds).map(([value, k]) => ({ value, label: k.label }))}
              hint="Public apps have no secret and use PKCE; confidential web and machine-to-machine apps get a secret."
            />
            <Field name="name" label="Name" placeholder="Storefront" hint="Shown on the hosted sign-in page." />
            <Field name="client_id" label="Client id" placeholder="storefront-web" hint="1–128 of A–Z a–z 0–9 . _ ~ -; cannot be changed later." />
            <Field name="lifetime_days" label="Secret lifetime (days)" type="number" min={1} max={365} defaultValue={DEFAULT_SECRET_LIFETIME_DAYS} hint="Confidential and machine-to-machine apps: 1–365 days." />
          </div>
          <TextArea
            name="redirect_uris"
            label="Redirect URIs"
            optional
            placeholder="https://app.example.com/callback"
            hint="One per line, exact. https, or http on localhost / 127.0.0.1 / [::1]; no fragments. Native apps may use a reverse-domain scheme."
          />
          <TextArea name="post_logout_redirect_uris" label="Post-logout redirect URIs" optional placeholder="https://app.example.com/signed-out" hint="One per line; same rules." />
          <TextArea name="allowed_origins" label="Allowed browser origins" optional placeholder="https://app.example.com" hint="Public apps that call the token endpoint from a browser: origins only, no path." />
          <CheckboxGroup
            name="identity_scopes"
            legend="Identity scopes"
            options={IDENTITY_SCOPES.map((s) => ({ value: s, label: s }))}
            defaultValues={["openid", "email", "profile"]}
            hint="openid is required for apps that sign users in; machine-to-machine apps have none."
          />
          <Checkbox name="account_security" label="Offer the account-security portal" hint="Passkeys, authenticator apps and recovery codes for this app's users." />
          <SubmitButton>Create application</SubmitButton>
        </ActionForm>
      </Card>
    </>
  );
}
