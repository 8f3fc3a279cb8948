import type { Metadata } from "next";
import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ActionForm, Checkbox, CheckboxGroup, Select, SubmitButton } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { FIRST_FACTORS, MFA_MODES, PASSKEY_ENROLLMENT } from "@/lib/authn/policy";
import { applicationHref } from "@/lib/console/applications";
import { roleAtLeast } from "@/lib/console/authz";
import {
  describePolicyField,
  FIRST_FACTOR_LABELS,
  getWorkspacePolicy,
  listApplicationPolicies,
  MFA_LABELS,
  PASSKEY_ENROLLMENT_LABELS,
  POLICY_FIELD_LABELS,
  POLICY_FIELDS,
} from "@/lib/console/policy";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../_lib/action-for";
import { pageAccess } from "../../../../_lib/session";

export const metadata: Metadata = { title: "Authentication" };

export default async function AuthenticationPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/authentication`);
  const service = await getService();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const readOnly = !roleAtLeast(access.role, "admin");
  const [{ policy }, applications] = await Promise.all([getWorkspacePolicy(service, ws), listApplicationPolicies(service, ws)]);
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Authentication" }]}
        title="Authentication"
        description="What a sign-in must prove before an application receives the user. Each application inherits this policy and may override any part of it on its own page."
      />
      <div className="space-y-6">
        <Card id="policy" title="Workspace policy">
          <ActionForm action={actionFor("setWorkspacePolicy", ws)} readOnly={readOnly} successMessage="Saved. It applies from the next authorization request." label="Workspace policy">
            <CheckboxGroup
              name="first_factors"
              legend="Ways to sign in"
              options={FIRST_FACTORS.map((f) => ({ value: f, label: FIRST_FACTOR_LABELS[f] }))}
              defaultValues={policy.firstFactors}
              hint="How a user identifies: at least one. A passkey alone counts as two factors."
            />
            <Select
              name="mfa"
              label="Multi-factor authentication"
              options={MFA_MODES.map((m) => ({ value: m, label: MFA_LABELS[m] }))}
              defaultValue={policy.mfa}
              hint="Required: a second factor (authenticator app, security key, passkey or recovery code) after a password or email code; users without one enrol one while signing in."
            />
            <Select
              name="passkey_enrollment"
              label="Passkey enrolment"
              options={PASSKEY_ENROLLMENT.map((m) => ({ value: m, label: PASSKEY_ENROLLMENT_LABELS[m] }))}
              defaultValue={policy.passkeyEnrollment}
              hint="After a successful sign-in of a user who has no passkey."
            />
            <Checkbox name="sign_up" label="Self-service sign-up (with an email address verified by a one-time code)" defaultChecked={policy.signUp} />
            <SubmitButton>Save policy</SubmitButton>
          </ActionForm>
        </Card>

        <Card id="applications" title="Applications" description="The policy in force for each application that signs users in. Highlighted values are the application's own.">
          {applications.length === 0 ? (
            <EmptyState title="No applications">Machine-to-machine applications sign no one in and have no policy.</EmptyState>
          ) : (
            <Table caption="Policy per application" head={["Application", ...POLICY_FIELDS.map((f) => POLICY_FIELD_LABELS[f])]}>
              {applications.map((a) => (
                <tr key={a.clientId}>
                  <Td>
                    <Link prefetch={false} href={applicationHref(ws, a.clientId, "sign-in")} className="font-medium text-indigo-700 hover:underline">
                      {a.name}
                    </Link>
                    <div className="font-mono text-xs text-slate-500">{a.clientId}</div>
                  </Td>
                  {POLICY_FIELDS.map((f) => (
                    <Td key={f}>
                      {a.overrides[f] === undefined ? <span className="text-slate-600">{describePolicyField(f, a.effective)}</span> : <Badge tone="indigo">{describePolicyField(f, a.effective)}</Badge>}
                    </Td>
                  ))}
                </tr>
              ))}
            </Table>
          )}
        </Card>
      </div>
    </>
  );
}
