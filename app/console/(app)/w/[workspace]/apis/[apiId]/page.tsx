import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ActionForm, Field, SubmitButton, TextArea } from "@/components/ui/form";
import { Notice } from "@/components/ui/page-header";
import { PageHeader } from "@/components/ui/page-header";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { listApiGrants } from "@/lib/authz/model";
import { apiFootprint, getApi } from "@/lib/console/apis";
import { applicationHref, typeLabels } from "@/lib/console/applications";
import { roleAtLeast } from "@/lib/console/authz";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../../_lib/action-for";
import { pageAccess } from "../../../../../_lib/session";
import { ApiStatusCard } from "./status";

export const metadata: Metadata = { title: "API" };

export default async function ApiPage({ params }: { params: Promise<{ workspace: string; apiId: string }> }) {
  const { workspace, apiId } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/apis/${apiId}`);
  const service = await getService();
  const ws = access.workspace.id;
  const api = await getApi(service.db, ws, apiId);
  if (!api) notFound();
  const base = `/console/w/${ws}`;
  const [grants, footprint] = await Promise.all([listApiGrants(service.db, ws, { audience: api.audience }), apiFootprint(service.db, ws, api.id, service.clock.now())]);
  const readOnly = !roleAtLeast(access.role, "admin");
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "APIs", href: `${base}/apis` }, { label: api.name }]}
        title={
          <span className="flex flex-wrap items-center gap-2">
            {api.name} {api.active ? <Badge tone="green">active</Badge> : <Badge tone="red">inactive</Badge>}
          </span>
        }
        description={<code className="break-all font-mono">{api.audience}</code>}
      />
      <div className="space-y-6">
        {!api.active ? <Notice tone="warning">This API is inactive: it cannot be requested, and every token for it fails the checks until it is activated again.</Notice> : null}
        <Card title="Settings">
          <ActionForm action={actionFor("updateApi", ws)} hidden={{ api_id: api.id }} readOnly={readOnly} successMessage="Saved." label="API settings">
            <Field name="name" label="Name" defaultValue={api.name} />
            <TextArea
              name="permissions"
              label="Permissions"
              optional
              rows={5}
              defaultValue={api.permissions.join("\n")}
              hint="A permission removed here is removed from every role and application grant of this API too."
            />
            <SubmitButton>Save API</SubmitButton>
          </ActionForm>
        </Card>
        <Card title="Applications with access" description="Grant access from each application's page.">
          {grants.length === 0 ? (
            <EmptyState title="No application may call this API yet" />
          ) : (
            <Table caption="Applications with access" head={["Application", "Type", "Permissions"]}>
              {grants.map((g) => (
                <tr key={g.clientId}>
                  <Td>
                    <Link prefetch={false} className="font-medium text-indigo-700 hover:underline" href={applicationHref(ws, g.clientId, "api-access")}>
                      {g.clientName}
                    </Link>
                    <div className="font-mono text-xs text-slate-500">{g.clientId}</div>
                  </Td>
                  <Td>
                    <Badge>{typeLabels[g.clientType]}</Badge>
                  </Td>
                  <Td mono>{g.permissions.length ? g.permissions.join(" ") : "—"}</Td>
                </tr>
              ))}
            </Table>
          )}
        </Card>
        <ApiStatusCard api={api} footprint={footprint} ws={ws} readOnly={readOnly} />
      </div>
    </>
  );
}
