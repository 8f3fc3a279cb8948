import type { PortalView } from "@/lib/account-security/portal-view";
import type { VerifyPlan } from "@/lib/account-security/evidence";
import { hostedErrorText } from "@/lib/hosted/errors";
import { partsOf } from "@/components/factors";
import { translator } from "@/lib/i18n/translate";
import type { Locale } from "@/lib/i18n/locales";
import { PortalSection } from "./frame";

const REASON = {
  primary: "portal.verify.reason.primary",
  mfa: "portal.verify.reason.mfa",
  stronger: "portal.verify.reason.stronger",
} as const satisfies Record<Exclude<VerifyPlan["reason"], "provider_only">, string>;

/**
 * The re-verification panel (lib/account-security/evidence.ts): what the user can confirm with
 * now. `plan` is the verdict of the change being made (the credentials sections pass theirs);
 * without it, the verdict for adding a credential. An account that signs in only through its
 * identity provider is told why it cannot change anything here.
 */
export function VerifySection({ view, plan, locale }: { view: PortalView; plan?: VerifyPlan; locale: Locale }) {
  const t = translator(locale);
  const verdict = plan ?? (view.addVerdict.ok ? null : view.addVerdict.verify);
  if (!verdict) {
    return (
      <PortalSection title={t("portal.verify.confirmed")}>
        <p className="text-sm text-slate-600">{t("portal.verify.recent")}</p>
      </PortalSection>
    );
  }
  if (verdict.reason === "provider_only") {
    const text = hostedErrorText("portal_provider_only", { locale });
    return (
      <PortalSection title={text.title}>
        <p className="text-sm text-slate-600">{text.message}</p>
      </PortalSection>
    );
  }
  const primary = verdict.reason === "primary";
  // Each kind offered, through its factor's part (components/factors): a WebAuthn ceremony first, then the typed forms in the order offered.
  const parts = partsOf(primary ? verdict.primary : verdict.mfa).flatMap(({ portal }) => {
    const Part = portal && (primary ? portal.primary : portal.mfa);
    return portal && Part && portal.shown(view) ? [{ Part, leads: portal.leads }] : [];
  });
  const shown = [...parts.filter((p) => p.leads), ...parts.filter((p) => !p.leads)];
  return (
    <PortalSection title={t("portal.verify.title")}>
      <p className="mb-3 text-sm text-slate-600">{t(REASON[verdict.reason])}</p>
      {shown.map(({ Part }, i) => (
        <Part key={i} view={view} t={t} locale={locale} verdict={verdict} after={i > 0} />
      ))}
    </PortalSection>
  );
}
