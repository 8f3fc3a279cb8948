import type { Metadata } from "next";
import { headers } from "next/headers";
import { notFound } from "next/navigation";
import { hostedErrorText } from "@/lib/hosted/errors";
import { negotiateLocale } from "@/lib/i18n/locales";
import { translator } from "@/lib/i18n/translate";
import { livePortalSession } from "@/lib/account-security/portal-session";
import { loadPortalView, portalFormMessage } from "@/lib/account-security/portal-view";
import { loadManageView } from "@/lib/account-security/manage-view";
import { requestContext } from "@/lib/server/router";
import { getService } from "@/lib/service";
import { HostedCard } from "@/components/hosted/hosted-card";
import { FormError, secondaryButtonClass } from "@/components/hosted/steps/step-form";
import { PortalForm } from "@/components/portal/portal-form";
import { PortalFrame } from "@/components/portal/frame";
import { VerifySection } from "@/components/portal/verify";
import { ApplicationSessionsSection, DoneNotice, FactorsSection, RecoveryCodesSection, SecurityAlertsSection } from "@/components/portal/sections";

export const dynamic = "force-dynamic";

/** The page's language: the browser's Accept-Language (lib/i18n), as for the sign-in pages. */
async function pageLocale() {
  return negotiateLocale((await headers()).get("accept-language"));
}

export async function generateMetadata(): Promise<Metadata> {
  return { title: translator(await pageLocale())("portal.title"), robots: { index: false }, referrer: "no-referrer" };
}

/** What the verification forms' answers say (`?done=`), besides the sections' (DoneNotice); any other value shows nothing. */
const NOTICES = {
  code_sent: "portal.notice.code_sent",
} as const;

/** The account-security portal: its sections, behind a live portal session (lib/account-security/portal-session.ts). */
export default async function PortalPage(props: { params: Promise<{ tenant: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const [{ tenant }, query] = await Promise.all([props.params, props.searchParams]);
  const service = await getService();
  // The workspace as served at the host this request came to (its own hostname or the default host).
  const ctx = await requestContext(service, await headers(), tenant);
  if (!ctx) notFound();
  const { workspace } = ctx;
  const locale = await pageLocale();
  const t = translator(locale);
  const cookieHeader = (await headers()).get("cookie");
  const portal = await livePortalSession(ctx, cookieHeader);
  if (!portal) {
    const ended = hostedErrorText("portal_session_ended", { locale });
    return (
      <HostedCard title={ended.title} workspaceName={workspace.name}>
        <p className="text-sm text-slate-600">{ended.message}</p>
      </HostedCard>
    );
  }
  const error = portalFormMessage(query.error, locale);
  const notice = typeof query.done === "string" && Object.hasOwn(NOTICES, query.done) ? NOTICES[query.done as keyof typeof NOTICES] : null;
  const [view, manage] = await Promise.all([
    loadPortalView(ctx, portal, { notice: typeof query.done === "string" ? query.done : null, error }),
    loadManageView(ctx, portal, cookieHeader),
  ]);
  return (
    <PortalFrame title={t("portal.title")} workspaceName={view.workspaceName}>
      <div className="-mt-4 flex flex-wrap items-baseline justify-between gap-2 text-sm text-slate-500">
        <span className="break-all">{view.userEmail}</span>
        <a href={view.returnUri} className="font-medium text-indigo-600 hover:text-indigo-500">
          {t("portal.back", { application: view.applicationName })}
        </a>
      </div>
      <FormError message={view.error ?? undefined} />
      <DoneNotice view={view} locale={locale} />
      {notice ? (
        <p role="status" className="rounded-md border border-emerald-200 bg-emerald-50 px-3 py-2 text-sm text-emerald-800">
          {t(notice)}
        </p>
      ) : null}
      <VerifySection view={view} locale={locale} />
      <FactorsSection view={view} manage={manage} locale={locale} />
      <RecoveryCodesSection view={view} manage={manage} locale={locale} />
      <ApplicationSessionsSection view={view} manage={manage} locale={locale} />
      <SecurityAlertsSection view={view} manage={manage} locale={locale} />
      <PortalForm view={view} path="/account/close" className="border-t border-slate-100 pt-4">
        <button type="submit" className={secondaryButtonClass}>
          {t("portal.done", { application: view.applicationName })}
        </button>
      </PortalForm>
    </PortalFrame>
  );
}
