import type { SignInView } from "@/lib/sign-in/view";
import { NewPasswordField } from "../new-password-field";
import { translator } from "@/lib/i18n/translate";
import { Divider, FormError, inputClass, primaryButtonClass, secondaryButtonClass, StepForm, STRONG_MARK, WithStrong } from "./step-form";

type View = Extract<SignInView, { kind: "step" }>;

const linkClass = "font-medium text-indigo-700 hover:text-indigo-600 hover:underline";

/** The first step's way to the sign-up (a plain link: the page shows the sign-up's first form). */
export function SignUpLink({ view }: { view: View }) {
  const t = translator(view.locale);
  return (
    <p className="mt-6 text-center text-sm text-slate-600">
      {t("signUp.newHere")}{" "}
      <a href={`${view.basePath}/sign-in?tx=${encodeURIComponent(view.txId)}&sign_up=1`} className={linkClass}>
        {t("signUp.create")}
      </a>
    </p>
  );
}

/** Sign-up, first form: the address to confirm with a code. */
export function SignUpStart({ view, error }: { view: View; error?: string }) {
  const t = translator(view.locale);
  return (
    <div>
      <FormError message={error} />
      <StepForm basePath={view.basePath} txId={view.txId} csrf={view.csrf} path="/sign-up/email" className="mt-4 space-y-4">
        <div>
          <label htmlFor="email" className="block text-sm font-medium text-slate-700">
            {t("signIn.email")}
          </label>
          <input id="email" name="email" type="email" autoComplete="email" required autoFocus className={inputClass} />
        </div>
        <p className="text-sm text-slate-500">{t("signUp.codeHint")}</p>
        <button type="submit" className={primaryButtonClass}>
          {t("signIn.continue")}
        </button>
      </StepForm>
      <p className="mt-6 text-center text-sm text-slate-600">
        {t("signUp.haveAccount")}{" "}
        <a href={`${view.basePath}/sign-in?tx=${encodeURIComponent(view.txId)}`} className={linkClass}>
          {t("signUp.signIn")}
        </a>
      </p>
    </div>
  );
}

/**
 * Sign-up, last form: the address is confirmed; the user chooses how to sign in. A refused password
 * (`passwordRefused`: the error is about it) is said under the field, in its hint's place, not
 * both.
 */
export function SignUpCredential({ view, error, passwordRefused = false }: { view: View; error?: string; passwordRefused?: boolean }) {
  const t = translator(view.locale);
  const form = { basePath: view.basePath, txId: view.txId, csrf: view.csrf };
  const choices = view.email.signUp.credentials;
  const passwordError = passwordRefused && choices.includes("password") ? error : undefined;
  return (
    <div>
      <FormError message={passwordError ? undefined : error} />
      <p className="mt-4 text-sm text-slate-600">
        <WithStrong text={t("signUp.confirmed", { address: STRONG_MARK })} strong={view.email.signUp.verifiedAddress} />
      </p>
      {choices.includes("password") ? (
        <StepForm {...form} path="/sign-up/account" className="mt-4 space-y-4">
          <input type="hidden" name="credential" value="password" />
          <input type="text" name="username" autoComplete="username" value={view.email.signUp.verifiedAddress ?? ""} readOnly hidden />
          <NewPasswordField locale={view.locale} label={t("signUp.choosePassword")} error={passwordError} />
          <button type="submit" className={primaryButtonClass}>
            {t("signUp.createAccount")}
          </button>
        </StepForm>
      ) : null}
      {choices.includes("passkey") ? (
        <>
          {choices.includes("password") ? <Divider label={t("signIn.or")} /> : null}
          <StepForm {...form} path="/sign-up/account" className="mt-4">
            <input type="hidden" name="credential" value="passkey" />
            <button type="submit" className={choices.includes("password") ? secondaryButtonClass : primaryButtonClass}>
              {t("signUp.createWithPasskey")}
            </button>
          </StepForm>
        </>
      ) : null}
      {choices.includes("email") ? (
        <StepForm {...form} path="/sign-up/account" className="mt-4">
          <input type="hidden" name="credential" value="email" />
          <p className="mb-4 text-sm text-slate-600">{t("signUp.emailOnly")}</p>
          <button type="submit" className={primaryButtonClass}>
            {t("signUp.createAccount")}
          </button>
        </StepForm>
      ) : null}
      <StepForm {...form} path="/sign-in/email/cancel" className="mt-4 text-center">
        <input type="hidden" name="then" value="sign_up" />
        <button type="submit" className="text-sm font-medium text-indigo-700 hover:text-indigo-600 hover:underline">
          {t("emailCode.differentEmail")}
        </button>
      </StepForm>
    </div>
  );
}
