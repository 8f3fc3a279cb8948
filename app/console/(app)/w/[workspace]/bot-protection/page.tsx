import type { Metadata } from "next";
import { Card } from "@/components/ui/card";
import { ActionForm, Select, SubmitButton } from "@/components/ui/form";
import { PageHeader } from "@/components/ui/page-header";
import { botChallengeModeOf } from "@/lib/authn/bot-challenge/console";
import { BOT_PRESSURE } from "@/lib/authn/bot-challenge/pressure";
import { roleAtLeast } from "@/lib/console/authz";
import { getService } from "@/lib/service";
import { actionFor } from "../../../../_lib/action-for";
import { pageAccess } from "../../../../_lib/session";

export const metadata: Metadata = { title: "Bot protection" };

const minutes = (ms: number) => `${ms / 60_000} minutes`;

/** The bot-challenge feature's page (lib/authn/bot-challenge): when the hosted sign-in asks a proof of work. */
export default async function BotProtectionPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/bot-protection`);
  const service = await getService();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const readOnly = !roleAtLeast(access.role, "admin");
  const mode = await botChallengeModeOf(service.db, ws);
  const p = BOT_PRESSURE;
  return (
    <>
      <PageHeader
        crumbs={[{ label: "Workspaces", href: "/console" }, { label: access.workspace.name, href: base }, { label: "Bot protection" }]}
        title="Bot protection"
        description="A proof of work on the sign-in page: before a password is checked or a code is emailed (sign-in, sign-up, password reset), the browser solves a small puzzle, a few seconds of its CPU, with no third party, no cookie and nothing for the user to click. Passkey sign-ins are never asked."
      />
      <div className="space-y-6">
        <Card
          id="mode"
          title="When to ask"
          description={`Adaptive asks only while there is unusual activity: ${p.perAddress.times} attempts from one network in ${minutes(p.perAddress.windowMs)}, ${p.perAccount.times} at one account in ${minutes(p.perAccount.windowMs)}, or ${p.perWorkspace.times} across the workspace in ${minutes(p.perWorkspace.windowMs)} (a failed password or a code sent counts as an attempt). Once a sign-in is asked, it is asked until it ends.`}
        >
          <ActionForm action={actionFor("setBotChallenge", ws)} readOnly={readOnly} successMessage="Saved." label="Bot protection">
            <Select
              name="mode"
              label="Ask a proof of work"
              options={[
                { value: "off", label: "Off" },
                { value: "adaptive", label: "Adaptive: only under unusual activity (recommended)" },
                { value: "always", label: "Always: on every password sign-in and every code sent" },
              ]}
              defaultValue={mode}
            />
            <SubmitButton>Save</SubmitButton>
          </ActionForm>
        </Card>
      </div>
    </>
  );
}
