import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm, Select, SubmitButton } from "@/components/ui/form";
import type { OrganizationInfo, RoleInfo, UserRoleInfo } from "@/lib/authz/model";
import { actionFor } from "../../../../../_lib/action-for";

/** The roles the user holds (each removable) and assigning one, across the workspace or in an organization they belong to. */
export function RolesCard({
  userId,
  roles,
  userRoles,
  organizations,
  ws,
  readOnly,
}: {
  userId: string;
  roles: RoleInfo[];
  userRoles: UserRoleInfo[];
  organizations: OrganizationInfo[];
  ws: string;
  readOnly: boolean;
}) {
  const memberOf = organizations.filter((o) => o.members.some((m) => m.userId === userId));
  const hidden = { user_id: userId };
  return (
    <Card title="Roles" description="Held across the workspace, or within an organization the user is a member of.">
      <div className="space-y-4">
        {userRoles.length === 0 ? (
          <p className="text-sm text-slate-500">No roles.</p>
        ) : (
          <ul className="divide-y divide-slate-100">
            {userRoles.map((r) => (
              <li key={`${r.role}-${r.organization?.id ?? "ws"}`} className="flex flex-wrap items-center justify-between gap-2 py-2">
                <span className="text-sm">
                  <span className="font-medium">{r.role}</span> <span className="text-slate-500">{r.organization ? `in ${r.organization.name}` : "across the workspace"}</span>
                </span>
                <ActionForm action={actionFor("removeRole", ws)} hidden={{ ...hidden, role: r.role, organization: r.organization?.slug ?? "" }} readOnly={readOnly} className="" label="Remove role">
                  <ConfirmButton title={`Remove ${r.role}?`} message="The user loses the permissions it grants at their next permission check." confirmLabel="Remove">
                    Remove
                  </ConfirmButton>
                </ActionForm>
              </li>
            ))}
          </ul>
        )}
        {roles.length === 0 ? (
          <p className="text-sm text-slate-500">This workspace has no roles yet.</p>
        ) : (
          <ActionForm action={actionFor("assignRole", ws)} hidden={hidden} readOnly={readOnly} className="grid items-end gap-3 sm:grid-cols-[1fr_1fr_auto]" label="Assign role">
            <Select name="role" label="Role" options={roles.map((r) => ({ value: r.name, label: r.name }))} />
            <Select name="organization" label="Where" options={[{ value: "", label: "Across the workspace" }, ...memberOf.map((o) => ({ value: o.slug, label: `In ${o.name}` }))]} />
            <SubmitButton variant="secondary">Assign</SubmitButton>
          </ActionForm>
        )}
      </div>
    </Card>
  );
}
