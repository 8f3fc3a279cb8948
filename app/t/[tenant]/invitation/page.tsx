import type { Metadata } from "next";
import { headers } from "next/headers";
import { notFound } from "next/navigation";
import { hostedErrorText } from "@/lib/hosted/errors";
import { negotiateLocale } from "@/lib/i18n/locales";
import { INVITATION_PAGE_ERRORS, invitationView } from "@/lib/organizations/invitations/acceptance";
import { invitationText } from "@/lib/organizations/invitations/messages";
import { requestContext } from "@/lib/server/router";
import { getService } from "@/lib/service";
import { HostedCard } from "@/components/hosted/hosted-card";
import { FormError, inputClass, primaryButtonClass } from "@/components/hosted/steps/step-form";

export const dynamic = "force-dynamic";

/** The page's language: the browser's Accept-Language (lib/i18n), as for the sign-in pages. */
async function pageLocale() {
  return negotiateLocale((await headers()).get("accept-language"));
}

export async function generateMetadata(): Promise<Metadata> {
  return { title: invitationText(await pageLocale(), "pageTitle"), robots: { index: false }, referrer: "no-referrer" };
}

const first = (v: string | string[] | undefined) => (typeof v === "string" ? v : undefined);

/**
 * An organization invitation's page (lib/organizations/invitations/acceptance.ts): opening the link
 * changes nothing; the form's post accepts. A plain server-rendered form: it works without JavaScript.
 */
export default async function InvitationPage(props: { params: Promise<{ tenant: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const [{ tenant }, query] = await Promise.all([props.params, props.searchParams]);
  const service = await getService();
  const ctx = await requestContext(service, await headers(), tenant);
  if (!ctx) notFound();
  const locale = await pageLocale();
  const view = await invitationView(ctx, { token: first(query.token), error: first(query.error), done: first(query.done) });

  if (view.kind === "unavailable") {
    const error = hostedErrorText("invitation_unavailable", { locale });
    return (
      <HostedCard title={error.title}>
        <p className="text-sm text-slate-600" data-testid="invitation-unavailable">
          {error.message}
        </p>
      </HostedCard>
    );
  }
  if (view.kind === "accepted") {
    const v = { organization: view.organization, email: view.email };
    return (
      <HostedCard title={invitationText(locale, "acceptedTitle", v)}>
        <div className="space-y-4">
          <p role="status" className="text-sm text-slate-600" data-testid="invitation-accepted">
            {invitationText(locale, "accepted", v)}
          </p>
          {view.sso ? <p className="text-sm text-slate-600">{invitationText(locale, "acceptedSso", v)}</p> : null}
          {view.passwordDiscarded ? <p className="rounded-md border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-900">{invitationText(locale, "acceptedPasswordDiscarded")}</p> : null}
          {view.application ? (
            <a href={view.application.url} className={`block text-center ${primaryButtonClass}`}>
              {invitationText(locale, "continueTo", { application: view.application.name })}
            </a>
          ) : null}
        </div>
      </HostedCard>
    );
  }
  const v = { organization: view.organization, email: view.email, min: view.passwordMinLength };
  return (
    <HostedCard title={invitationText(locale, "title", v)}>
      <form method="post" action={view.action} className="space-y-4">
        <input type="hidden" name="token" value={view.token} />
        <input type="hidden" name="csrf" value={view.csrf} />
        <FormError message={view.error ? invitationText(locale, INVITATION_PAGE_ERRORS[view.error], v) : undefined} />
        <p className="break-all text-sm text-slate-600">{invitationText(locale, "invitedAs", v)}</p>
        {view.administrator ? <p className="text-sm text-slate-600">{invitationText(locale, "asAdministrator", v)}</p> : null}
        {view.way === "existing" ? <p className="text-sm text-slate-600">{invitationText(locale, "existing", v)}</p> : null}
        {view.way === "sso" ? <p className="text-sm text-slate-600">{invitationText(locale, "sso", v)}</p> : null}
        {view.way === "password" ? (
          <div>
            <p className="mb-3 text-sm text-slate-600">{invitationText(locale, view.passwordOptional ? "passwordOptional" : "choosePassword", v)}</p>
            <label htmlFor="password" className="block text-sm font-medium text-slate-700">
              {invitationText(locale, "password")}
            </label>
            <input id="password" name="password" type="password" autoComplete="new-password" minLength={view.passwordMinLength} required={!view.passwordOptional} className={inputClass} />
          </div>
        ) : null}
        <button type="submit" className={primaryButtonClass}>
          {invitationText(locale, "accept")}
        </button>
      </form>
    </HostedCard>
  );
}
