import type { Metadata } from "next";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm, Field, Select, SubmitButton } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { Table, Td } from "@/components/ui/table";
import { operatorRoles, roleAtLeast } from "@/lib/console/authz";
import { InvitationLink } from "@/components/operators/invitation-link";
import { Time } from "@/components/ui/time";
import { listPendingInvitations } from "@/lib/operators/invitations";
import { listOperators } from "@/lib/operators/memberships";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../_lib/action-for";
import { pageAccess } from "../../../../_lib/session";

export const metadata: Metadata = { title: "Operators" };

const roleOptions = [...operatorRoles].reverse().map((r) => ({ value: r, label: r }));

export default async function OperatorsPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/operators`);
  const service = await getService();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const isOwner = roleAtLeast(access.role, "owner");
  const [operators, invitations] = await Promise.all([listOperators(service, ws, access.operator.userId), isOwner ? listPendingInvitations(service, ws) : Promise.resolve([])]);
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Operators" }]}
        title="Operators"
        description="Who administers this workspace. Owners manage operators; admins change configuration; viewers only look."
      />
      <div className="space-y-6">
        <Card title="Operators of this workspace">
          <Table caption="Operators" head={["Operator", "Role", "Account", ""]}>
            {operators.map((o) => (
              <tr key={o.membershipId}>
                <Td>
                  <span className="font-medium">{o.email}</span>
                  {o.userId === access.operator.userId ? <span className="ml-1 text-xs text-slate-500">(you)</span> : null}
                  {o.name ? <div className="text-xs text-slate-500">{o.name}</div> : null}
                </Td>
                <Td>
                  <ActionForm action={actionFor("changeOperatorRole", ws)} hidden={{ membership_id: o.membershipId }} readOnly={!isOwner} className="flex flex-wrap items-end gap-2" label={`Role of ${o.email}`}>
                    <Select name="role" label="Role" options={roleOptions} defaultValue={o.role} />
                    <SubmitButton variant="secondary" size="sm">
                      Change
                    </SubmitButton>
                  </ActionForm>
                </Td>
                <Td>{o.status === "active" ? <Badge tone="green">active</Badge> : <Badge tone="red">disabled</Badge>}</Td>
                <Td>
                  <div className="flex flex-wrap gap-2">
                    {o.accountManageable ? (
                      <ActionForm action={actionFor("setOperatorStatus", ws)} hidden={{ operator_user_id: o.userId, status: o.status === "active" ? "disabled" : "active" }} readOnly={!isOwner} className="" label={`Account of ${o.email}`}>
                        {o.status === "active" ? (
                          <ConfirmButton title={`Disable ${o.email}?`} message="Their console sessions end at once and they cannot sign in." confirmLabel="Disable">
                            Disable
                          </ConfirmButton>
                        ) : (
                          <SubmitButton variant="secondary" size="sm">
                            Enable
                          </SubmitButton>
                        )}
                      </ActionForm>
                    ) : null}
                    <ActionForm action={actionFor("removeOperator", ws)} hidden={{ membership_id: o.membershipId }} readOnly={!isOwner} className="" label={`Remove ${o.email}`}>
                      <ConfirmButton title={`Remove ${o.email} from this workspace?`} message="They lose access to this workspace at once." confirmLabel="Remove">
                        Remove
                      </ConfirmButton>
                    </ActionForm>
                  </div>
                </Td>
              </tr>
            ))}
          </Table>
        </Card>
        <Card
          title="Invite an operator"
          description="They get an email with a link, valid once for 7 days: they choose their own password there, or sign in with the operator account they already have. Inviting the same email again replaces the earlier invitation."
        >
          <ActionForm action={actionFor("inviteOperator", ws)} readOnly={!isOwner} label="Invite an operator">
            <InvitationLink />
            <div className="grid gap-4 sm:grid-cols-2">
              <Field name="email" label="Email" type="email" />
              <Select name="role" label="Role" options={roleOptions} defaultValue="viewer" />
            </div>
            <SubmitButton>Send invitation</SubmitButton>
          </ActionForm>
        </Card>
        {isOwner ? (
          <Card title="Pending invitations">
            {invitations.length === 0 ? (
              <p className="text-sm text-slate-600">No invitations are waiting to be accepted.</p>
            ) : (
              <Table caption="Pending invitations" head={["Email", "Role", "Sent", "Expires", ""]}>
                {invitations.map((i) => (
                  <tr key={i.id}>
                    <Td>
                      <span className="font-medium">{i.email}</span>
                    </Td>
                    <Td>{i.role}</Td>
                    <Td>
                      <Time value={i.createdAt} />
                    </Td>
                    <Td>
                      <Time value={i.expiresAt} />
                    </Td>
                    <Td>
                      <ActionForm action={actionFor("revokeInvitation", ws)} hidden={{ invitation_id: i.id }} className="" label={`Withdraw the invitation of ${i.email}`}>
                        <ConfirmButton title={`Withdraw the invitation of ${i.email}?`} message="Its link stops working at once." confirmLabel="Withdraw">
                          Withdraw
                        </ConfirmButton>
                      </ActionForm>
                    </Td>
                  </tr>
                ))}
              </Table>
            )}
          </Card>
        ) : null}
      </div>
    </>
  );
}
