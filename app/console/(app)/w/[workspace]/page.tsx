import type { Metadata } from "next";
import { PageHeader } from "@/components/ui/page-header";
import { workspaceActivity } from "@/lib/console/activity";
import { workspaceOverview } from "@/lib/console/workspaces";
import { getService } from "@/lib/service";
import { gettingStarted } from "@/lib/getting-started/checklist";
import { roleAtLeast } from "@/lib/console/authz";
import { GettingStartedCard } from "@/components/console/getting-started";
import { TrySignInButton } from "@/components/console/try-sign-in";
import { trySignInAction } from "../../../_lib/actions";
import { pageAccess } from "../../../_lib/session";
import { ActivitySection, IssuerCard, OverviewNotices, OverviewStats } from "./overview";

export const metadata: Metadata = { title: "Overview" };

export default async function OverviewPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}`);
  const service = await getService();
  const [o, activity, start] = await Promise.all([workspaceOverview(service, access), workspaceActivity(service, access.workspace.id), gettingStarted(service, access.workspace.id)]);
  const now = service.clock.now();
  const base = `/console/w/${o.id}`;
  return (
    <>
      <PageHeader crumbs={[{ label: "Workspaces", href: "/console" }, { label: o.name }]} title={o.name} description={<span className="font-mono">{o.id}</span>} />
      <div className="space-y-6">
        <OverviewNotices o={o} base={base} now={now} />
        {start.done ? null : (
          <GettingStartedCard
            state={start}
            base={base}
            tryButton={start.application ? <TrySignInButton action={trySignInAction.bind(null, o.id)} clientId={start.application.clientId} readOnly={!roleAtLeast(access.role, "admin")} /> : null}
          />
        )}
        <ActivitySection activity={activity} base={base} />
        <IssuerCard o={o} base={base} />
        <OverviewStats o={o} base={base} now={now} />
      </div>
    </>
  );
}
