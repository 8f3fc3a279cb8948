import Link from "next/link";
import { Card } from "@/components/ui/card";
import { ActionForm, CheckboxGroup, Select, SubmitButton } from "@/components/ui/form";
import { PolicySummary } from "@/components/console/policy-summary";
import { FIRST_FACTOR_LABELS, MFA_LABELS, PASSKEY_ENROLLMENT_LABELS, policyRows, type ApplicationPolicyView } from "@/lib/console/policy";
import { FIRST_FACTORS, MFA_MODES, PASSKEY_ENROLLMENT } from "@/lib/authn/policy";
import { actionFor } from "../../../../../_lib/action-for";

/** The application's overrides of the workspace's authentication policy, beside the policy in force. */
export function PolicyCard({ clientId, policy, ws, base, readOnly }: { clientId: string; policy: ApplicationPolicyView; ws: string; base: string; readOnly: boolean }) {
  return (
    <Card
      id="authentication"
      title="Authentication policy"
      description={
        <>
          Each part inherits the{" "}
          <Link prefetch={false} href={`${base}/authentication`} className="text-indigo-700 underline hover:text-indigo-900">
            workspace&apos;s policy
          </Link>{" "}
          unless this application overrides it.
        </>
      }
    >
      <div className="grid gap-6 lg:grid-cols-2">
        <ActionForm action={actionFor("setApplicationPolicy", ws)} hidden={{ client_id: clientId }} readOnly={readOnly} successMessage="Saved." label="Application authentication policy">
          <Select
            name="first_factors_mode"
            label="Ways to sign in"
            options={[
              { value: "inherit", label: "Inherit from the workspace" },
              { value: "override", label: "Only the ones checked below" },
            ]}
            defaultValue={policy.overrides.firstFactors ? "override" : "inherit"}
          />
          <CheckboxGroup
            name="first_factors"
            legend="Allowed when overriding"
            options={FIRST_FACTORS.map((f) => ({ value: f, label: FIRST_FACTOR_LABELS[f] }))}
            defaultValues={policy.overrides.firstFactors ?? policy.effective.firstFactors}
          />
          <Select
            name="mfa"
            label="Multi-factor authentication"
            options={[{ value: "inherit", label: "Inherit from the workspace" }, ...MFA_MODES.map((m) => ({ value: m, label: MFA_LABELS[m] }))]}
            defaultValue={policy.overrides.mfa ?? "inherit"}
          />
          <Select
            name="passkey_enrollment"
            label="Passkey enrolment"
            options={[{ value: "inherit", label: "Inherit from the workspace" }, ...PASSKEY_ENROLLMENT.map((m) => ({ value: m, label: PASSKEY_ENROLLMENT_LABELS[m] }))]}
            defaultValue={policy.overrides.passkeyEnrollment ?? "inherit"}
          />
          <Select
            name="sign_up"
            label="Self-service sign-up"
            options={[
              { value: "inherit", label: "Inherit from the workspace" },
              { value: "on", label: "On" },
              { value: "off", label: "Off" },
            ]}
            defaultValue={policy.overrides.signUp === undefined ? "inherit" : policy.overrides.signUp ? "on" : "off"}
          />
          <SubmitButton>Save policy</SubmitButton>
        </ActionForm>
        <div>
          <h3 className="mb-3 text-sm font-semibold text-slate-900">In force for this application</h3>
          <PolicySummary label="Effective policy" rows={policyRows(policy.effective, policy.overrides)} />
        </div>
      </div>
    </Card>
  );
}
