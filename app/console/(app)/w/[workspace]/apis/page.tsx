import type { Metadata } from "next";
import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ActionForm, Field, SubmitButton, TextArea } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { listApiGrants, listApis } from "@/lib/authz/model";
import { roleAtLeast } from "@/lib/console/authz";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../_lib/action-for";
import { pageAccess } from "../../../../_lib/session";
import { countOf } from "@/lib/i18n/plural";

export const metadata: Metadata = { title: "APIs" };

export default async function ApisPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/apis`);
  const service = await getService();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const [apis, grants] = await Promise.all([listApis(service.db, ws), listApiGrants(service.db, ws)]);
  const readOnly = !roleAtLeast(access.role, "admin");
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "APIs" }]}
        title="APIs"
        description="Resource servers your applications call. The audience is the resource value clients request; permissions are what roles and API grants hand out."
      />
      <div className="grid gap-6 lg:grid-cols-3">
        <div className="lg:col-span-2">
          <Card title="APIs">
            {apis.length === 0 ? (
              <EmptyState title="No APIs yet">Define an API, then grant it to applications and give its permissions to roles.</EmptyState>
            ) : (
              <Table caption="APIs" head={["API", "Permissions", "Granted to", "Status"]}>
                {apis.map((api) => (
                  <tr key={api.id}>
                    <Td>
                      <Link prefetch={false} href={`${base}/apis/${api.id}`} className="font-medium text-indigo-700 hover:underline">
                        {api.name}
                      </Link>
                      <div className="break-all font-mono text-xs text-slate-500">{api.audience}</div>
                    </Td>
                    <Td>{api.permissions.length}</Td>
                    <Td>{countOf(grants.filter((g) => g.audience === api.audience).length, "application", "applications")}</Td>
                    <Td>{api.active ? <Badge tone="green">active</Badge> : <Badge tone="red">inactive</Badge>}</Td>
                  </tr>
                ))}
              </Table>
            )}
          </Card>
        </div>
        <Card title="New API">
          <ActionForm action={actionFor("createApi", ws)} readOnly={readOnly} label="New API">
            <Field name="audience" label="Audience" placeholder="https://api.example.com" hint="An absolute URI without a fragment; cannot be changed later." />
            <Field name="name" label="Name" placeholder="Orders API" />
            <TextArea name="permissions" label="Permissions" optional placeholder={"read:orders\nwrite:orders"} hint="Separated by spaces or new lines; 1–64 of A–Z a–z 0–9 : . _ -." />
            <SubmitButton>Create API</SubmitButton>
          </ActionForm>
        </Card>
      </div>
    </>
  );
}
