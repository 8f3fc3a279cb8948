import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { Card } from "@/components/ui/card";
import { ActionForm, CheckboxGroup, Field, SubmitButton, TextArea } from "@/components/ui/form";
import { ConfirmedAction } from "@/components/console/confirmed-action";
import { DangerZone, DangerZoneItem } from "@/components/console/danger-zone";
import { PageHeader } from "@/components/ui/page-header";
import { EmptyState } from "@/components/ui/table";
import { listApis, listRoles } from "@/lib/authz/model";
import { roleAtLeast } from "@/lib/console/authz";
import { roleHolders } from "@/lib/console/roles";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../../_lib/action-for";
import { pageAccess } from "../../../../../_lib/session";
import { countOf } from "@/lib/i18n/plural";

export const metadata: Metadata = { title: "Role" };

export default async function RolePage({ params }: { params: Promise<{ workspace: string; roleId: string }> }) {
  const { workspace, roleId } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/roles/${roleId}`);
  const service = await getService();
  const ws = access.workspace.id;
  const [roles, apis, holders] = await Promise.all([listRoles(service.db, ws), listApis(service.db, ws), roleHolders(service.db, ws, roleId)]);
  const role = roles.find((r) => r.id === roleId);
  if (!role) notFound();
  const base = `/console/w/${ws}`;
  const readOnly = !roleAtLeast(access.role, "admin");
  return (
    <>
      <PageHeader crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Roles", href: `${base}/roles` }, { label: role.name }]} title={role.name} />
      <div className="space-y-6">
        <Card title="Name and description">
          <ActionForm action={actionFor("updateRole", ws)} hidden={{ role_id: role.id }} readOnly={readOnly} successMessage="Saved." label="Role name and description">
            <Field name="name" label="Name" defaultValue={role.name} hint="Unique in the workspace; at most 64 characters. Holders keep the role when it is renamed." />
            <TextArea name="description" label="Description" optional defaultValue={role.description ?? ""} />
            <SubmitButton variant="secondary">Save</SubmitButton>
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
        <DangerZone>
          <DangerZoneItem title="Delete the role" description="Not reversible: its holders lose it everywhere.">
            <ConfirmedAction
              action={actionFor("deleteRole", ws)}
              hidden={{ role_id: role.id }}
              readOnly={readOnly}
              opener="Delete role…"
              title={`Delete the role ${role.name}?`}
              consequences={
                <p>
                  Its {countOf(holders, "holder loses", "holders lose")} it, at workspace level and in every organization, and the permission check denies the
                  permissions it granted from the next request. Tokens already issued are not revoked, but no check allows on this role any more.
                </p>
              }
              confirmValue={role.name}
              confirmWhat="the role's name"
              submitLabel="Delete role"
            />
          </DangerZoneItem>
        </DangerZone>
      </div>
    </>
  );
}
