import Link from "next/link";
import { Card, Stat } from "@/components/ui/card";
import { Notice } from "@/components/ui/page-header";
import { Time } from "@/components/ui/time";
import { CopyButton } from "@/components/ui/copy-button";
import { OtherIssuers } from "@/components/console/other-issuers";
import { ActivityChart, FactorAdoptionChart } from "@/components/console/activity-chart";
import type { WorkspaceActivity } from "@/lib/console/activity";
import type { WorkspaceOverview } from "@/lib/console/workspaces";
import { applicationHref } from "@/lib/console/applications";
import { DAY } from "@/lib/clock";
import { countOf } from "@/lib/i18n/plural";

/** What needs an administrator's attention: events flagged as possible theft, client secrets expiring soon. */
export function OverviewNotices({ o, base, now }: { o: WorkspaceOverview; base: string; now: Date }) {
  return (
    <>
      {o.flaggedEvents > 0 ? (
        <Notice tone="danger" title="Possible token theft">
          {countOf(o.flaggedEvents, "security event was", "security events were")} flagged in the last 30 days (for example a refresh token used twice).{" "}
          <Link prefetch={false} href={`${base}/audit?flagged=1`} className="font-medium underline">
            Review them in the audit log
          </Link>
          .
        </Notice>
      ) : null}
      {o.expiringSecrets.length > 0 ? (
        <Notice tone="warning" title="Client secrets expiring soon">
          <ul className="list-inside list-disc">
            {o.expiringSecrets.map((s, i) => (
              <li key={i}>
                <Link prefetch={false} className="font-mono underline" href={applicationHref(o.id, s.clientId, "secrets")}>
                  {s.clientId}
                </Link>{" "}
                expires <Time value={s.expiresAt} now={now} relativeOnly />
              </li>
            ))}
          </ul>
        </Notice>
      ) : null}
    </>
  );
}

/** The last 30 days per UTC day: one chart per series, and factor adoption; a sentence instead while there is nothing. */
export function ActivitySection({ activity, base }: { activity: WorkspaceActivity; base: string }) {
  // A workspace with no users and no events has nothing to chart: empty axes and "0 of 0" say less than a sentence.
  const quiet = activity.factors.users === 0 && activity.series.every((s) => s.total === 0);
  return (
    <section aria-labelledby="activity-heading" className="space-y-3">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h2 id="activity-heading" className="text-base font-semibold text-slate-900">
          Activity, last 30 days
        </h2>
        <p className="text-xs text-slate-600">
          Per UTC day, {activity.from} to {activity.to}.{" "}
          <Link prefetch={false} href={`${base}/audit?type=sign_in.failed`} className="underline">
            Failed sign-ins
          </Link>{" "}
          and{" "}
          <Link prefetch={false} href={`${base}/audit?type=refresh.reuse_detected`} className="underline">
            reuse alerts
          </Link>{" "}
          in the audit log
        </p>
      </div>
      {quiet ? (
        <p className="rounded-lg border border-dashed border-slate-300 bg-white px-4 py-6 text-center text-sm text-slate-600" data-testid="activity-empty">
          Nothing yet. Sign-ins, failed sign-ins, tokens issued and reuse alerts appear here per day once users sign in, with how many of them use each factor.
        </p>
      ) : (
        <>
          <div className="grid gap-4 sm:grid-cols-2 xl:grid-cols-4">
            {activity.series.map((s) => (
              <ActivityChart key={s.key} series={s} tone={s.key === "reuseAlerts" ? "red" : s.key === "failedSignIns" ? "amber" : "indigo"} />
            ))}
          </div>
          <FactorAdoptionChart factors={activity.factors} />
        </>
      )}
    </section>
  );
}

/** The issuer, its discovery document and JWKS, and the other issuers the workspace answers as. */
export function IssuerCard({ o, base }: { o: WorkspaceOverview; base: string }) {
  return (
    <Card title="Issuer" description="Point your applications' OpenID Connect library at this issuer.">
      <dl className="space-y-3 text-sm">
        {[
          ["Issuer", o.issuer],
          ["Discovery", o.discovery],
          ["JWKS", o.jwks],
        ].map(([label, value]) => (
          <div key={label} className="grid gap-1 sm:grid-cols-[8rem_1fr_auto] sm:items-center">
            <dt className="text-slate-500">{label}</dt>
            <dd className="break-all font-mono text-xs">
              {label === "Issuer" ? (
                value
              ) : (
                <a className="text-indigo-700 underline" href={value} target="_blank" rel="noreferrer">
                  {value}
                </a>
              )}
            </dd>
            <dd>
              <CopyButton value={value} />
            </dd>
          </div>
        ))}
      </dl>
      {o.issuers.others.length ? (
        <div className="mt-3">
          <OtherIssuers issuers={o.issuers} base={base} />
        </div>
      ) : null}
    </Card>
  );
}

/** The workspace's counts, each linking to its list, and the signing key's age. */
export function OverviewStats({ o, base, now }: { o: WorkspaceOverview; base: string; now: Date }) {
  const keyAgeDays = o.activeKey?.activatedAt ? Math.floor((now.getTime() - o.activeKey.activatedAt.getTime()) / DAY) : null;
  return (
    <dl className="grid grid-cols-2 gap-4 md:grid-cols-4">
      <Stat label="Applications" value={<Link prefetch={false} href={`${base}/applications`}>{o.counts.applications}</Link>} />
      <Stat label="Users" value={<Link prefetch={false} href={`${base}/users`}>{o.counts.users}</Link>} />
      <Stat label="APIs" value={<Link prefetch={false} href={`${base}/apis`}>{o.counts.apis}</Link>} />
      <Stat label="Roles" value={<Link prefetch={false} href={`${base}/roles`}>{o.counts.roles}</Link>} />
      <Stat label="Organizations" value={<Link prefetch={false} href={`${base}/organizations`}>{o.counts.organizations}</Link>} />
      <Stat label="Live sessions" value={o.counts.activeSessions} hint="Hosted sign-in sessions" />
      <Stat label="Live grants" value={o.counts.activeGrants} hint="Refresh families" />
      <Stat
        label="Signing key age"
        value={keyAgeDays === null ? "—" : `${keyAgeDays} d`}
        hint={o.pendingKey ? "A new key is published, waiting to be activated" : o.activeKey ? "Rotate in Signing keys" : "Created on first use"}
        tone={keyAgeDays !== null && keyAgeDays > 180 ? "warning" : "default"}
      />
    </dl>
  );
}
