import type { PortalView } from "@/lib/account-security/portal-view";
import type { VerifyPlan } from "@/lib/account-security/evidence";
import { hostedErrorText } from "@/lib/hosted/errors";
import { WebAuthnForm } from "@/components/hosted/webauthn-form";
import { Divider, inputClass, primaryButtonClass, secondaryButtonClass } from "@/components/hosted/steps/step-form";
import { PortalForm } from "./portal-form";
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
  const form = { basePath: view.basePath, txId: "", csrf: view.csrf };
  const webauthn = view.webauthnOptions && (primary ? verdict.primary.includes("passkey") : verdict.mfa.some((m) => m === "passkey" || m === "security_key"));
  return (
    <PortalSection title={t("portal.verify.title")}>
      <p className="mb-3 text-sm text-slate-600">{t(REASON[verdict.reason])}</p>
      {webauthn ? (
        <WebAuthnForm
          {...form}
          path="/account/verify/webauthn"
          ceremony="get"
          optionsJSON={view.webauthnOptions!}
          label={t(primary ? "portal.verify.usePasskey" : "portal.verify.usePasskeyOrKey")}
          failedMessage={t("portal.verify.webauthnFailed")}
          primary
        />
      ) : null}
      {primary && verdict.primary.includes("password") ? (
        <>
          {webauthn ? <Divider label={t("signIn.or")} /> : null}
          <PortalForm view={view} path="/account/verify/password">
            <label htmlFor="portal-password" className="block text-sm font-medium text-slate-700">
              {t("signIn.password")}
            </label>
            <input id="portal-password" name="password" type="password" autoComplete="current-password" required className={inputClass} />
            <button type="submit" className={primaryButtonClass}>
              {t("portal.verify.withPassword")}
            </button>
          </PortalForm>
        </>
      ) : null}
      {primary && verdict.primary.includes("email_otp") ? (
        <>
          <Divider label={t("signIn.or")} />
          {view.emailCodeSent ? (
            <PortalForm view={view} path="/account/verify/email/code">
              <label htmlFor="portal-email-code" className="block text-sm font-medium text-slate-700">
                {t("portal.verify.emailCode")}
              </label>
              <input id="portal-email-code" name="code" type="text" inputMode="numeric" pattern="[0-9 ]*" maxLength={8} autoComplete="one-time-code" required className={inputClass} />
              <button type="submit" className={primaryButtonClass}>
                {t("portal.verify.withCode")}
              </button>
            </PortalForm>
          ) : null}
          <PortalForm view={view} path="/account/verify/email" className="mt-3">
            <button type="submit" className={secondaryButtonClass}>
              {t(view.emailCodeSent ? "emailCode.resend" : "portal.verify.emailMe")}
            </button>
          </PortalForm>
        </>
      ) : null}
      {!primary && verdict.mfa.includes("totp") ? (
        <>
          {webauthn ? <Divider label={t("signIn.or")} /> : null}
          <PortalForm view={view} path="/account/verify/totp">
            <label htmlFor="portal-totp" className="block text-sm font-medium text-slate-700">
              {t("mfa.totpCode")}
            </label>
            <input id="portal-totp" name="code" type="text" inputMode="numeric" pattern="[0-9 ]*" maxLength={8} autoComplete="one-time-code" required className={inputClass} />
            <button type="submit" className={primaryButtonClass}>
              {t("portal.verify.confirm")}
            </button>
          </PortalForm>
        </>
      ) : null}
      {!primary && verdict.mfa.includes("recovery_code") ? (
        <PortalForm view={view} path="/account/verify/recovery-code" className="mt-4 space-y-3">
          <label htmlFor="portal-recovery" className="block text-sm font-medium text-slate-700">
            {t("portal.verify.orRecovery")}
          </label>
          <input id="portal-recovery" name="code" type="text" autoComplete="off" required className={inputClass} />
          <button type="submit" className={secondaryButtonClass}>
            {t("portal.verify.withRecovery")}
          </button>
        </PortalForm>
      ) : null}
    </PortalSection>
  );
}
