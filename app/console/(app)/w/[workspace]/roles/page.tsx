import type { Metadata } from "next";
import Link from "next/link";
import { Card } from "@/components/ui/card";
import { ActionForm, Field, SubmitButton, TextArea } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { listRoles } from "@/lib/authz/model";
import { roleAtLeast } from "@/lib/console/authz";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../_lib/action-for";
import { pageAccess } from "../../../../_lib/session";

export const metadata: Metadata = { title: "Roles" };

export default async function RolesPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/roles`);
  const service = await getService();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const roles = await listRoles(service.db, ws);
  const readOnly = !roleAtLeast(access.role, "admin");
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Roles" }]}
        title="Roles"
        description="A role grants API permissions to the users who hold it, across the workspace or within one organization."
      />
      <div className="grid gap-6 lg:grid-cols-3">
        <div className="lg:col-span-2">
          <Card title="Roles">
            {roles.length === 0 ? (
              <EmptyState title="No roles yet">Create a role, then choose the API permissions it grants.</EmptyState>
            ) : (
              <Table caption="Roles" head={["Role", "Permissions"]}>
                {roles.map((role) => (
                  <tr key={role.id}>
                    <Td>
                      <Link prefetch={false} href={`${base}/roles/${role.id}`} className="font-medium text-indigo-700 hover:underline">
                        {role.name}
                      </Link>
                      {role.description ? <div className="text-xs text-slate-500">{role.description}</div> : null}
                    </Td>
                    <Td mono>{role.permissions.flatMap((p) => p.permissions).join(" ") || "—"}</Td>
                  </tr>
                ))}
              </Table>
            )}
          </Card>
        </div>
        <Card title="New role">
          <ActionForm action={actionFor("createRole", ws)} readOnly={readOnly} label="New role">
            <Field name="name" label="Name" placeholder="support-agent" />
            <TextArea name="description" label="Description" optional />
            <SubmitButton>Create role</SubmitButton>
          </ActionForm>
        </Card>
      </div>
    </>
  );
}
