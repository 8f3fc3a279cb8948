import type { SignInView } from "@/lib/sign-in/view";
import { translator } from "@/lib/i18n/translate";
import { Divider, FormError, inputClass, primaryButtonClass, secondaryButtonClass, StepForm } from "./step-form";
import { WebAuthnEnrollPrompt } from "./webauthn-prompt";

type View = Extract<SignInView, { kind: "step" }>;

/** The base32 secret in groups of four, easier to type into an app that cannot scan. */
const grouped = (secret: string) => secret.match(/.{1,4}/g)?.join(" ") ?? secret;

/**
 * The enrolment step: the application requires two-step verification and the user has no second
 * factor yet. An authenticator app (a QR code and the secret, confirmed by a first code), or a
 * security key or passkey.
 */
export function EnrollSecondFactor({ view, error }: { view: View; error?: string }) {
  if (view.step.kind !== "enroll_second_factor") return null;
  const t = translator(view.locale);
  const options = new Set(view.step.options);
  const form = { basePath: view.basePath, txId: view.txId, csrf: view.csrf };
  const enrollment = view.totp.enrollment;
  const webauthn = options.has("security_key") || options.has("passkey");
  return (
    <div>
      <p className="text-sm text-slate-600">{t("mfa.enrollIntro", { application: view.applicationName })}</p>
      <div className="mt-4">
        <FormError message={error} />
      </div>
      {options.has("totp") ? (
        enrollment ? (
          <div className="mt-4 space-y-4">
            <p className="text-sm text-slate-700">{t("mfa.scan")}</p>
            {/* eslint-disable-next-line @next/next/no-img-element -- an inline SVG data URL, generated per enrolment */}
            <img src={enrollment.qrSvg} alt={t("mfa.qrAlt")} width={192} height={192} className="mx-auto h-48 w-48" />
            <p className="text-center">
              <span className="sr-only">{t("mfa.setupKey")} </span>
              <code id="totp-secret" data-secret={enrollment.secret} className="inline-block select-all rounded bg-slate-100 px-2 py-1 font-mono text-sm leading-6 text-slate-800">
                {grouped(enrollment.secret)}
              </code>
            </p>
            <StepForm {...form} path="/sign-in/totp/enroll" className="space-y-4">
              <div>
                <label htmlFor="totp-code" className="block text-sm font-medium text-slate-700">
                  {t("mfa.appCode")}
                </label>
                <input id="totp-code" name="code" type="text" inputMode="numeric" pattern="[0-9 ]*" maxLength={8} autoComplete="one-time-code" required autoFocus className={inputClass} />
              </div>
              <button type="submit" className={primaryButtonClass}>
                {t("mfa.verifyAndContinue")}
              </button>
            </StepForm>
          </div>
        ) : (
          <StepForm {...form} path="/sign-in/totp/enroll/start" className="mt-4">
            <button type="submit" className={primaryButtonClass}>
              {t("mfa.setUpApp")}
            </button>
          </StepForm>
        )
      ) : null}
      {webauthn ? (
        <>
          {options.has("totp") ? <Divider label={t("signIn.or")} /> : null}
          <WebAuthnEnrollPrompt view={view} />
        </>
      ) : null}
      {enrollment ? (
        <StepForm {...form} path="/sign-in/totp/enroll/start" className="mt-4">
          <button type="submit" className={secondaryButtonClass}>
            {t("mfa.newKey")}
          </button>
        </StepForm>
      ) : null}
    </div>
  );
}
