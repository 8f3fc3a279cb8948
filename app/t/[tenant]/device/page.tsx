import type { Metadata } from "next";
import { headers } from "next/headers";
import { notFound } from "next/navigation";
import { negotiateLocale } from "@/lib/i18n/locales";
import { translator, type Translate } from "@/lib/i18n/translate";
import { DEVICE_PAGE_ERRORS, deviceView } from "@/lib/oauth/device-authorization/verification";
import { isIdentityScope } from "@/lib/oauth/scopes";
import { requestContext } from "@/lib/server/router";
import { getService } from "@/lib/service";
import { HostedCard } from "@/components/hosted/hosted-card";
import { FormError, inputClass, primaryButtonClass, secondaryButtonClass } from "@/components/hosted/steps/step-form";

export const dynamic = "force-dynamic";

/** The page's language: the browser's Accept-Language (lib/i18n), as for the sign-in pages. */
async function pageLocale() {
  return negotiateLocale((await headers()).get("accept-language"));
}

export async function generateMetadata(): Promise<Metadata> {
  return { title: translator(await pageLocale())("device.pageTitle"), robots: { index: false }, referrer: "no-referrer" };
}

const first = (v: string | string[] | undefined) => (typeof v === "string" ? v : undefined);

function scopeText(t: Translate, scope: string): string {
  if (isIdentityScope(scope)) return t(`device.scope.${scope}`);
  return t("device.scope.permission", { permission: scope });
}

/**
 * The device page (RFC 8628 `verification_uri`): the user enters the code a device shows, signs in,
 * and allows or denies the device (lib/oauth/device-authorization/verification.ts). Plain
 * server-rendered forms: it works without JavaScript.
 */
export default async function DevicePage(props: { params: Promise<{ tenant: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const [{ tenant }, query] = await Promise.all([props.params, props.searchParams]);
  const service = await getService();
  // The workspace as served at the host this request came to (its own hostname or the default host).
  const ctx = await requestContext(service, await headers(), tenant);
  if (!ctx) notFound();
  const t = translator(await pageLocale());
  const view = await deviceView(ctx, { user_code: first(query.user_code), d: first(query.d), error: first(query.error) }, (await headers()).get("cookie"));

  if (view.kind === "approved" || view.kind === "denied") {
    return (
      <HostedCard title={t(`device.${view.kind}.title`)}>
        <p role="status" className="text-sm text-slate-600" data-testid="device-outcome">
          {t(`device.${view.kind}.body`, { application: view.applicationName })}
        </p>
      </HostedCard>
    );
  }
  if (view.kind === "sign_in") {
    return (
      <HostedCard title={t("device.signIn.title")}>
        <form method="post" action={view.action} className="space-y-4">
          <input type="hidden" name="d" value={view.id} />
          <input type="hidden" name="csrf" value={view.csrf} />
          <p className="text-sm text-slate-600">{t("device.signIn.body", { application: view.applicationName })}</p>
          <button type="submit" className={primaryButtonClass}>
            {t("device.signIn.submit")}
          </button>
        </form>
      </HostedCard>
    );
  }
  if (view.kind === "consent") {
    return (
      <HostedCard title={t("device.consent.title")}>
        <form method="post" action={view.action} className="space-y-4">
          <input type="hidden" name="d" value={view.id} />
          <input type="hidden" name="csrf" value={view.csrf} />
          <p className="text-sm text-slate-600">{t("device.consent.body", { application: view.applicationName })}</p>
          <p className="break-all text-xs text-slate-500">{t("device.consent.signedInAs", { email: view.userEmail })}</p>
          <div>
            <p className="text-sm font-medium text-slate-700">{t("device.consent.scopes")}</p>
            <ul className="mt-2 list-disc space-y-1 pl-5 text-sm text-slate-600" data-testid="device-scopes">
              {view.scope.map((s) => (
                <li key={s}>{scopeText(t, s)}</li>
              ))}
            </ul>
          </div>
          <p className="rounded-md border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-900">{t("device.consent.warning")}</p>
          <div className="flex gap-3">
            <button type="submit" name="decision" value="deny" className={secondaryButtonClass}>
              {t("device.consent.deny")}
            </button>
            <button type="submit" name="decision" value="approve" className={primaryButtonClass}>
              {t("device.consent.approve")}
            </button>
          </div>
        </form>
      </HostedCard>
    );
  }
  return (
    <HostedCard title={t("device.enter.title")}>
      <form method="post" action={view.action} className="space-y-4">
        <FormError message={view.error ? t(DEVICE_PAGE_ERRORS[view.error]) : undefined} />
        <p className="text-sm text-slate-600">{t("device.enter.body")}</p>
        <div>
          <label htmlFor="user_code" className="block text-sm font-medium text-slate-700">
            {t("device.enter.label")}
          </label>
          <input
            id="user_code"
            name="user_code"
            type="text"
            defaultValue={view.userCode}
            autoComplete="off"
            autoCapitalize="characters"
            spellCheck={false}
            maxLength={32}
            required
            autoFocus={view.userCode === ""}
            placeholder="XXXX-XXXX"
            className={`${inputClass} font-mono tracking-widest uppercase`}
          />
        </div>
        <button type="submit" className={primaryButtonClass}>
          {t("device.enter.submit")}
        </button>
      </form>
    </HostedCard>
  );
}
