import type { Metadata } from "next";
import { Card } from "@/components/ui/card";
import { ActionForm, Field, SubmitButton } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { ConfirmedAction } from "@/components/console/confirmed-action";
import { DangerZone, DangerZoneItem } from "@/components/console/danger-zone";
import { roleAtLeast } from "@/lib/console/authz";
import { workspaceFootprint } from "@/lib/console/workspaces";
import { OtherIssuers } from "@/components/console/other-issuers";
import { workspaceIssuers } from "@/lib/console/issuers";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../_lib/action-for";
import { pageAccess } from "../../../../_lib/session";
import { countOf } from "@/lib/i18n/plural";

export const metadata: Metadata = { title: "Workspace settings" };

export default async function WorkspaceSettingsPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/settings`);
  const service = await getService();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const [footprint, issuers] = await Promise.all([workspaceFootprint(service, ws), workspaceIssuers(service, ws)]);
  const issuer = issuers.primary;
  const isOwner = roleAtLeast(access.role, "owner");
  return (
    <>
      <PageHeader crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Settings" }]} title="Workspace settings" />
      <div className="space-y-6">
        <Card
          title="Name"
          description={`Shown in the console and, unless branding sets a display name, on the hosted pages. The id never changes${issuers.page ? `; the issuer follows the primary hostname (${issuers.page.label})` : ""}.`}
        >
          <ActionForm action={actionFor("renameWorkspace", ws)} readOnly={!roleAtLeast(access.role, "admin")} successMessage="Saved." label="Workspace name">
            <Field name="name" label="Name" defaultValue={access.workspace.name} />
            <dl className="grid gap-x-4 gap-y-1 text-sm sm:grid-cols-[6rem_1fr]">
              <dt className="text-slate-600">Id</dt>
              <dd className="font-mono text-slate-900">{ws}</dd>
              <dt className="text-slate-600">Issuer</dt>
              <dd className="break-all font-mono text-slate-900">{issuer}</dd>
            </dl>
            <OtherIssuers issuers={issuers} base={base} />
            <SubmitButton variant="secondary">Save name</SubmitButton>
          </ActionForm>
        </Card>
        <DangerZone>
          <DangerZoneItem title="Delete the workspace" description={isOwner ? "Owners only. This cannot be undone." : "Only an owner of this workspace can delete it."}>
            {isOwner ? (
              <ConfirmedAction
                action={actionFor("deleteWorkspace", ws)}
                hidden={{}}
                opener="Delete workspace…"
                title={`Delete ${access.workspace.name} and everything in it?`}
                consequences={
                  <>
                    <p>
                      This removes its {countOf(footprint.applications, "application", "applications")}, {countOf(footprint.users, "user", "users")}, APIs, roles, organizations, signing keys and audit log, and ends its{" "}
                      {countOf(footprint.activeSessions, "active sign-in session", "active sign-in sessions")} and {countOf(footprint.activeGrants, "active grant", "active grants")} with every refresh and access token. Its issuer (
                      <code className="font-mono">{issuer}</code>{issuers.others.length ? ", and its other addresses" : ""}) stops answering: every application using it stops working.
                    </p>
                    <p>Operators lose access to it. The deletion is recorded in the console&apos;s own audit log.</p>
                  </>
                }
                confirmValue={ws}
                confirmWhat="the workspace id"
                submitLabel="Delete workspace"
              />
            ) : null}
          </DangerZoneItem>
        </DangerZone>
      </div>
    </>
  );
}
