import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { Badge } from "@/components/ui/badge";
import { Notice, PageHeader } from "@/components/ui/page-header";
import { OtherIssuers } from "@/components/console/other-issuers";
import { SectionNav } from "@/components/console/section-nav";
import { APPLICATION_TABS, applicationFootprint, applicationHref, applicationSecrets, applicationSocialProviderIds, getApplication, typeLabels, type ApplicationTab } from "@/lib/console/applications";
import { workspaceIssuers } from "@/lib/console/issuers";
import { listSocialProviders } from "@/lib/console/social-providers";
import { roleAtLeast } from "@/lib/console/authz";
import { getApplicationPolicy } from "@/lib/console/policy";
import { listApiGrants, listApis } from "@/lib/authz/model";
import { getService } from "@/lib/service";
import { pageAccess } from "../../../../../_lib/session";
import { ApiAccessCard } from "./api-access";
import { ConnectCard } from "./connect";
import { PolicyCard } from "./policy";
import { SecretsCard } from "./secrets";
import { HandoffCard, ProtocolCard, SettingsCard } from "./settings";
import { SocialCard } from "./social";
import { ApplicationDangerZone } from "./status";
import { Card } from "@/components/ui/card";
import { TrySignInButton } from "@/components/console/try-sign-in";
import { trySignInAction } from "../../../../../_lib/actions";

export const metadata: Metadata = { title: "Application" };

/**
 * One application, one tab at a time (`?tab=`, plain links: the same without JavaScript, and a form
 * posted from a tab comes back to it); what cannot be undone has its own tab, the danger zone.
 */
export default async function ApplicationPage({ params, searchParams }: { params: Promise<{ workspace: string; clientId: string }>; searchParams: Promise<{ tab?: string | string[] }> }) {
  const [{ workspace, clientId: rawClientId }, query] = await Promise.all([params, searchParams]);
  const clientId = decodeURIComponent(rawClientId);
  const requestedTab = typeof query.tab === "string" && (APPLICATION_TABS as readonly string[]).includes(query.tab) ? query.tab : null;
  // After signing in, back to the same tab.
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/applications/${rawClientId}${requestedTab ? `?tab=${requestedTab}` : ""}`);
  const service = await getService();
  const app = await getApplication(service, access.workspace.id, clientId);
  if (!app) notFound();
  const ws = access.workspace.id;
  const base = `/console/w/${ws}`;
  const readOnly = !roleAtLeast(access.role, "admin");
  const now = service.clock.now();
  const confidential = app.type !== "PUBLIC";
  const [secrets, apis, grants, policy, socialProviders, offeredProviders, footprint, issuers] = await Promise.all([
    confidential ? applicationSecrets(service, access, app.clientId) : Promise.resolve([]),
    listApis(service.db, ws),
    listApiGrants(service.db, ws, { clientId: app.clientId }),
    getApplicationPolicy(service, ws, app.clientId),
    listSocialProviders(service, ws),
    applicationSocialProviderIds(service, ws, app.id),
    applicationFootprint(service.db, ws, app.id, now),
    workspaceIssuers(service, ws),
  ]);
  const signsUsersIn = app.type !== "M2M";
  // The page's tabs, in the order an administrator works through them; what cannot be undone comes last.
  const tabs = (
    [
      ["connect", "Connect", true],
      ["settings", "Settings", true],
      ["secrets", "Secrets", confidential],
      ["sign-in", "Sign-in", signsUsersIn],
      ["api-access", "API access", true],
      ["portal", "Portal", app.type === "WEB_CONFIDENTIAL"],
      ["danger-zone", "Danger zone", true],
    ] as const satisfies readonly (readonly [ApplicationTab, string, boolean])[]
  )
    .filter(([, , shown]) => shown)
    .map(([id, label]) => ({ id, label }));
  const tab = tabs.find((t) => t.id === query.tab)?.id ?? "connect";
  return (
    <>
      <PageHeader
        crumbs={[
          { label: "Workspaces", href: "/console" },
          { label: access.workspace.name, href: base },
          { label: "Applications", href: `${base}/applications` },
          { label: app.name },
        ]}
        title={
          <span className="flex flex-wrap items-center gap-2">
            {app.name} <Badge>{typeLabels[app.type]}</Badge>
            {app.active ? <Badge tone="green">enabled</Badge> : <Badge tone="red">disabled</Badge>}
          </span>
        }
      />
      {!app.active ? (
        <div className="mb-6">
          <Notice tone="warning">This application is disabled: it cannot sign anyone in, and every token it holds fails the checks.</Notice>
        </div>
      ) : null}
      <SectionNav label="Application sections" current={tab} sections={tabs.map((t) => ({ ...t, href: applicationHref(ws, app.clientId, t.id) }))} />
      <div className="space-y-6">
        {tab === "connect" ? (
          <>
            <ConnectCard app={app} issuer={issuers.primary} firstGrant={grants[0]} otherIssuers={<OtherIssuers issuers={issuers} base={base} />} />
            {signsUsersIn ? (
              <Card id="try" title="Try the sign-in" description="Opens the hosted sign-in page for this application, with its policy and branding, and ends here with the claims its ID token would carry. Nothing is issued or sent to the application.">
                {app.active ? <TrySignInButton action={trySignInAction.bind(null, ws)} clientId={app.clientId} readOnly={readOnly} /> : <p className="text-sm text-slate-600">Enable the application to try its sign-in.</p>}
              </Card>
            ) : null}
          </>
        ) : null}
        {tab === "settings" ? <SettingsCard app={app} ws={ws} readOnly={readOnly} /> : null}
        {tab === "settings" ? <ProtocolCard app={app} ws={ws} readOnly={readOnly} /> : null}
        {tab === "secrets" ? <SecretsCard app={app} secrets={secrets} now={now} ws={ws} readOnly={readOnly} /> : null}
        {tab === "sign-in" ? (
          <>
            {policy ? <PolicyCard clientId={app.clientId} policy={policy} ws={ws} base={base} readOnly={readOnly} /> : null}
            <SocialCard clientId={app.clientId} providers={socialProviders} offered={offeredProviders} ws={ws} base={base} readOnly={readOnly} />
          </>
        ) : null}
        {tab === "api-access" ? <ApiAccessCard app={app} apis={apis} grants={grants} ws={ws} readOnly={readOnly} /> : null}
        {tab === "portal" ? <HandoffCard app={app} /> : null}
        {tab === "danger-zone" ? <ApplicationDangerZone app={app} footprint={footprint} ws={ws} readOnly={readOnly} /> : null}
      </div>
    </>
  );
}
