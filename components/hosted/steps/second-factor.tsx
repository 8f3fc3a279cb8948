import type { SignInView } from "@/lib/sign-in/view";
import { translator } from "@/lib/i18n/translate";
import { Divider, FormError, inputClass, primaryButtonClass, secondaryButtonClass, StepForm } from "./step-form";
import { SecurityKeyPrompt } from "./webauthn-prompt";
import { PasswordInput } from "../password-input";

type View = Extract<SignInView, { kind: "step" }>;

/**
 * The second-factor step: the user's enrolled second factors (an authenticator code, a security
 * key or passkey; the password after an email code), and a recovery code in place of any of them.
 */
export function SecondFactor({ view, error }: { view: View; error?: string }) {
  if (view.step.kind !== "second_factor") return null;
  const t = translator(view.locale);
  const options = new Set(view.step.options);
  const form = { basePath: view.basePath, txId: view.txId, csrf: view.csrf };
  const totp = options.has("totp");
  const webauthn = options.has("security_key") || options.has("passkey");
  return (
    <div>
      <FormError message={error} />
      {totp ? (
        <StepForm {...form} path="/sign-in/totp" className="mt-4 space-y-4">
          <div>
            <label htmlFor="totp-code" className="block text-sm font-medium text-slate-700">
              {t("mfa.totpCode")}
            </label>
            <input id="totp-code" name="code" type="text" inputMode="numeric" pattern="[0-9 ]*" maxLength={8} autoComplete="one-time-code" required autoFocus className={inputClass} />
          </div>
          <button type="submit" className={primaryButtonClass}>
            {t("mfa.verify")}
          </button>
        </StepForm>
      ) : null}
      {webauthn ? (
        <>
          {totp ? <Divider label={t("signIn.or")} /> : null}
          <SecurityKeyPrompt view={view} />
        </>
      ) : null}
      {options.has("password") && view.userEmail ? (
        <>
          {totp || webauthn ? <Divider label={t("signIn.or")} /> : null}
          {/* After an email code, the password is the factor that makes the sign-in multi-factor. */}
          <StepForm {...form} path="/sign-in/password" className="mt-4 space-y-4">
            {/* The account's address as the form's username: password managers match the saved password by it. */}
            <input type="text" name="email" autoComplete="username" value={view.userEmail} readOnly hidden />
            <div>
              <label htmlFor="password" className="block text-sm font-medium text-slate-700">
                {t("signIn.password")}
              </label>
              <PasswordInput id="password" name="password" autoComplete="current-password" required autoFocus={!totp} toggleLabel={t("signIn.showPassword")} />
            </div>
            <button type="submit" className={primaryButtonClass}>
              {t("signIn.continue")}
            </button>
          </StepForm>
        </>
      ) : null}
      {options.has("recovery_code") ? (
        <details className="mt-6 text-sm">
          <summary className="cursor-pointer text-slate-600 hover:text-slate-900">{t("mfa.useRecoveryCode")}</summary>
          <StepForm {...form} path="/sign-in/recovery-code" className="mt-3 space-y-3">
            <div>
              <label htmlFor="recovery-code" className="block text-sm font-medium text-slate-700">
                {t("mfa.recoveryCode")}
              </label>
              <input id="recovery-code" name="code" type="text" autoComplete="off" spellCheck={false} maxLength={64} required placeholder="xxxx-xxxxxxxx-xxxxxxxx" className={`${inputClass} font-mono`} />
            </div>
            <button type="submit" className={secondaryButtonClass}>
              {t("mfa.submitRecoveryCode")}
            </button>
          </StepForm>
        </details>
      ) : null}
    </div>
  );
}
