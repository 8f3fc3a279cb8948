import type { SignInView } from "@/lib/sign-in/view";
import { NewPasswordField } from "../new-password-field";
import { translator } from "@/lib/i18n/translate";
import { FormError, inputClass, primaryButtonClass, StepForm, STRONG_MARK, WithStrong } from "./step-form";

type View = Extract<SignInView, { kind: "step" }>;

const linkClass = "text-sm font-medium text-indigo-700 hover:text-indigo-600 hover:underline";

/** "Forgot your password?" under the password field (a plain link: the page shows the reset's first form). */
export function ForgotPasswordLink({ view }: { view: View }) {
  const t = translator(view.locale);
  return (
    <p className="-mt-2 text-right">
      <a href={`${view.basePath}/sign-in?tx=${encodeURIComponent(view.txId)}&reset=1`} className={linkClass}>
        {t("reset.forgot")}
      </a>
    </p>
  );
}

/** The reset's first form: the account's address, for a code. */
export function ResetStart({ view, error, email }: { view: View; error?: string; email?: string | null }) {
  const t = translator(view.locale);
  return (
    <div>
      <FormError message={error} />
      <p className="mt-4 text-sm text-slate-600">{t("reset.intro")}</p>
      <StepForm basePath={view.basePath} txId={view.txId} csrf={view.csrf} path="/sign-in/reset/email" className="mt-4 space-y-4">
        <div>
          <label htmlFor="email" className="block text-sm font-medium text-slate-700">
            {t("signIn.email")}
          </label>
          <input id="email" name="email" type="email" autoComplete="username" required autoFocus className={inputClass} defaultValue={email ?? undefined} />
        </div>
        <button type="submit" className={primaryButtonClass}>
          {t("reset.sendCode")}
        </button>
      </StepForm>
      <p className="mt-6 text-center">
        <a href={`${view.basePath}/sign-in?tx=${encodeURIComponent(view.txId)}`} className={linkClass}>
          {t("reset.back")}
        </a>
      </p>
    </div>
  );
}

/**
 * The new password a sign-in asks for: after a reset's code, or in place of a password known from a
 * breach. A refused password is said under the field, in its hint's place.
 */
export function NewPassword({ view, error, passwordRefused }: { view: View; error?: string; passwordRefused: boolean }) {
  if (view.step.kind !== "new_password") return null;
  const t = translator(view.locale);
  const form = { basePath: view.basePath, txId: view.txId, csrf: view.csrf };
  const fieldError = passwordRefused ? error : undefined;
  const reset = view.step.reason === "reset";
  return (
    <div>
      <FormError message={fieldError ? undefined : error} />
      <p className="mt-4 text-sm text-slate-600">{reset ? <WithStrong text={t("reset.chooseFor", { address: STRONG_MARK })} strong={view.userEmail} /> : t("reset.breached")}</p>
      <StepForm {...form} path="/sign-in/new-password" className="mt-4 space-y-4">
        <input type="text" name="username" autoComplete="username" value={view.userEmail ?? ""} readOnly hidden />
        <NewPasswordField locale={view.locale} label={t("reset.newPassword")} error={fieldError} />
        <button type="submit" className={primaryButtonClass}>
          {t("reset.save")}
        </button>
      </StepForm>
      {reset ? (
        <StepForm {...form} path="/sign-in/reset/cancel" className="mt-4 text-center">
          <button type="submit" className={linkClass}>
            {t("reset.back")}
          </button>
        </StepForm>
      ) : null}
    </div>
  );
}

/** Said once after the password changed: the other sessions ended; then the sign-in goes on. */
export function PasswordChanged({ view }: { view: View }) {
  const t = translator(view.locale);
  return (
    <div>
      <p className="text-sm text-slate-600" role="status">
        {t("reset.changed")}
      </p>
      <StepForm basePath={view.basePath} txId={view.txId} csrf={view.csrf} path="/sign-in/password-changed" className="mt-6">
        <button type="submit" className={primaryButtonClass} autoFocus>
          {t("signIn.continue")}
        </button>
      </StepForm>
    </div>
  );
}
