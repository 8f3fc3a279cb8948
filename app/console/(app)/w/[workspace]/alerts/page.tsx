import type { Metadata } from "next";
import { Card } from "@/components/ui/card";
import { ActionForm, Checkbox, SubmitButton } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { roleAtLeast } from "@/lib/console/authz";
import { alertPolicyFor } from "@/lib/security-alerts/console";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../_lib/action-for";
import { pageAccess } from "../../../../_lib/session";

export const metadata: Metadata = { title: "Security alerts" };

const CHOICES = [
  { name: "new_password", label: "A new password", hint: "Chosen after a reset, in place of a breached one at sign-in, or set by an administrator." },
  { name: "factor_changed", label: "A sign-in method added or removed", hint: "A passkey, security key or authenticator app, in the account-security portal, at sign-in, or removed by an administrator." },
  { name: "new_recovery_codes", label: "New recovery codes", hint: "A new set generated: the earlier codes stop working." },
  { name: "new_browser", label: "A sign-in from a new browser", hint: "The account signed in before, never from this browser. An account's first sign-in does not alert." },
  { name: "token_reuse", label: "A sign-in ended for a reused refresh token", hint: "Possible token theft: also shown in the portal's security alerts." },
] as const;

/** The security-alerts feature's page (lib/security-alerts): which alerts users get by email. */
export default async function SecurityAlertsPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/alerts`);
  const service = await getService();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const readOnly = !roleAtLeast(access.role, "admin");
  const policy = await alertPolicyFor(service.db, ws);
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Security alerts" }]}
        title="Security alerts"
        description="Email to the account's address, in its language, when something changes its security: what happened, when, from which address (and browser, when known), and what to do if it was not them, with a link to the account-security portal."
      />
      <div className="space-y-6">
        <Card id="alerts" title="Alerts by email" description="Each alert is sent once, after the change is saved. Turning one on applies to changes from then on. Without an SMTP server, messages go to the development outbox.">
          <ActionForm action={actionFor("setSecurityAlerts", ws)} readOnly={readOnly} successMessage="Saved. It applies to the next change." label="Security alerts">
            {CHOICES.map((c) => (
              <Checkbox key={c.name} name={c.name} label={c.label} hint={c.hint} defaultChecked={policy[c.name]} />
            ))}
            <SubmitButton>Save</SubmitButton>
          </ActionForm>
        </Card>
      </div>
    </>
  );
}
