import type { Metadata } from "next";
import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ActionForm, Field, SubmitButton } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { listOrganizations } from "@/lib/authz/model";
import { roleAtLeast } from "@/lib/console/authz";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../_lib/action-for";
import { pageAccess } from "../../../../_lib/session";

export const metadata: Metadata = { title: "Organizations" };

export default async function OrganizationsPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/organizations`);
  const service = await getService();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const orgs = await listOrganizations(service.db, ws);
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Organizations" }]}
        title="Organizations"
        description="Customer organizations: their members, roles within them, and enterprise sign-in settings."
      />
      <div className="grid gap-6 lg:grid-cols-3">
        <div className="lg:col-span-2">
          <Card title="Organizations">
            {orgs.length === 0 ? (
              <EmptyState title="No organizations yet" />
            ) : (
              <Table caption="Organizations" head={["Organization", "Members", "Status"]}>
                {orgs.map((o) => (
                  <tr key={o.id}>
                    <Td>
                      <Link prefetch={false} href={`${base}/organizations/${o.id}`} className="font-medium text-indigo-700 hover:underline">
                        {o.name}
                      </Link>
                      <div className="font-mono text-xs text-slate-500">{o.slug}</div>
                    </Td>
                    <Td>{o.members.length}</Td>
                    <Td>{o.active ? <Badge tone="green">active</Badge> : <Badge tone="red">inactive</Badge>}</Td>
                  </tr>
                ))}
              </Table>
            )}
          </Card>
        </div>
        <Card title="New organization">
          <ActionForm action={actionFor("createOrganization", ws)} readOnly={!roleAtLeast(access.role, "admin")} label="New organization">
            <Field name="slug" label="Slug" placeholder="acme" hint="The organization_id in tokens; cannot be changed later." />
            <Field name="name" label="Name" placeholder="Acme Corporation" />
            <SubmitButton>Create organization</SubmitButton>
          </ActionForm>
        </Card>
      </div>
    </>
  );
}
