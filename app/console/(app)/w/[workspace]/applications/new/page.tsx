import type { Metadata } from "next";
import Link from "next/link";
import { Card } from "@/components/ui/card";
import { ActionForm, SubmitButton } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { SecretReveal } from "@/components/console/secret-reveal";
import { GoToCreatedApplication } from "@/components/console/created-secret";
import { NewApplicationFields } from "@/components/console/new-application-fields";
import { REDIRECT_URIS_HINT } from "@/lib/console/redirect-uris-field";
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
                Go to the application list
              </Link>
            </p>
          </SecretReveal>
          <GoToCreatedApplication base={base} />
          <NewApplicationFields
            kinds={Object.entries(applicationKinds).map(([value, k]) => ({ value, label: k.label, type: k.type }))}
            defaultKind="spa"
            identityScopes={IDENTITY_SCOPES}
            defaultLifetimeDays={DEFAULT_SECRET_LIFETIME_DAYS}
            redirectUrisHint={REDIRECT_URIS_HINT}
          />
          <SubmitButton>Create application</SubmitButton>
        </ActionForm>
      </Card>
    </>
  );
}
