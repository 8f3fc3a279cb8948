import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm, CheckboxGroup, SubmitButton, TextArea } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { EmptyState } from "@/components/ui/table";
import { listApis, listRoles } from "@/lib/authz/model";
import { roleAtLeast } from "@/lib/console/authz";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../../_lib/action-for";
import { pageAccess } from "../../../../../_lib/session";

export const metadata: Metadata = { title: "Role" };

export default async function RolePage({ params }: { params: Promise<{ workspace: string; roleId: string }> }) {
  const { workspace, roleId } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/roles/${roleId}`);
  const service = await getService();
  const ws = access.workspace.id;
  const [roles, apis] = await Promise.all([listRoles(service.db, ws), listApis(service.db, ws)]);
  const role = roles.find((r) => r.id === roleId);
  if (!role) notFound();
  const base = `/console/w/${ws}`;
  const readOnly = !roleAtLeast(access.role, "admin");
  return (
    <>
      <PageHeader crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Roles", href: `${base}/roles` }, { label: role.name }]} title={role.name} />
      <div className="space-y-6">
        <Card title="Description">
          <ActionForm action={actionFor("updateRole", ws)} hidden={{ role_id: role.id }} readOnly={readOnly} successMessage="Saved." label="Role description">
            <TextArea name="description" label="Description" optional defaultValue={role.description ?? ""} />
            <SubmitButton variant="secondary">Save description</SubmitButton>
          </ActionForm>
        </Card>
        <Card title="Permissions" description="Per API. A change applies to every holder at their next permission check.">
          {apis.length === 0 ? (
            <EmptyState title="No APIs in this workspace">Define an API first.</EmptyState>
          ) : (
            <div className="divide-y divide-slate-100">
              {apis.map((api) => (
                <div key={api.id} className="py-4 first:pt-0 last:pb-0">
                  <ActionForm action={actionFor("setRoleApiPermissions", ws)} hidden={{ role: role.name, audience: api.audience }} readOnly={readOnly} successMessage="Saved." label={`Permissions on ${api.name}`}>
                    {api.permissions.length ? (
                      <CheckboxGroup
                        name="permissions"
                        legend={`${api.name} (${api.audience})`}
                        options={api.permissions.map((p) => ({ value: p, label: p }))}
                        defaultValues={role.permissions.find((p) => p.audience === api.audience)?.permissions ?? []}
                      />
                    ) : (
                      <p className="text-sm text-slate-500">
                        {api.name} defines no permissions.
                      </p>
                    )}
                    <SubmitButton variant="secondary" size="sm">
                      Save
                    </SubmitButton>
                  </ActionForm>
                </div>
              ))}
            </div>
          )}
        </Card>
        <Card title="Delete role">
          <ActionForm action={actionFor("deleteRole", ws)} hidden={{ role_id: role.id }} readOnly={readOnly} label="Delete role">
            <ConfirmButton title={`Delete the role ${role.name}?`} message="Every user loses it, and the permissions it granted, at once." confirmLabel="Delete role" size="md">
              Delete role
            </ConfirmButton>
          </ActionForm>
        </Card>
      </div>
    </>
  );
}
