import type { SignInView } from "@/lib/sign-in/view";
import { translator } from "@/lib/i18n/translate";
import { FormError, inputClass, primaryButtonClass, secondaryButtonClass, StepForm, STRONG_MARK, WithStrong } from "./step-form";

type View = Extract<SignInView, { kind: "step" }>;

const linkButtonClass = "text-sm font-medium text-indigo-700 hover:text-indigo-600 hover:underline focus:outline-none focus:ring-2 focus:ring-indigo-300";

/**
 * "Email me a code" on the first step. Beside the password form it submits that form's email
 * field to the code endpoint (one field for both, no script needed); alone, it has its own field.
 */
export function EmailCodeRequest({ view, passwordFormId, autoComplete, defaultEmail }: { view: View; passwordFormId: string | null; autoComplete: string; defaultEmail?: string }) {
  const t = translator(view.locale);
  const path = `${view.basePath}/sign-in/email`;
  if (passwordFormId) {
    return (
      <button type="submit" form={passwordFormId} formAction={path} formNoValidate className={secondaryButtonClass}>
        {t("emailCode.request")}
      </button>
    );
  }
  return (
    <StepForm basePath={view.basePath} txId={view.txId} csrf={view.csrf} path="/sign-in/email" className="mt-4 space-y-4">
      <div>
        <label htmlFor="email" className="block text-sm font-medium text-slate-700">
          {t("signIn.email")}
        </label>
        <input id="email" name="email" type="email" autoComplete={autoComplete} required autoFocus className={inputClass} defaultValue={defaultEmail} />
      </div>
      <button type="submit" className={primaryButtonClass}>
        {t("emailCode.request")}
      </button>
    </StepForm>
  );
}

/** Where each purpose's code is sent, checked and given up, and what the page says of it. */
const CODE_FORMS = {
  sign_in: { verify: "/sign-in/email/verify", send: "/sign-in/email", cancel: "/sign-in/email/cancel", sent: "emailCode.sentSignIn", back: "emailCode.otherWay" },
  sign_up: { verify: "/sign-up/verify", send: "/sign-up/email", cancel: "/sign-in/email/cancel", sent: "emailCode.sentSignUp", back: "emailCode.differentEmail" },
  reset: { verify: "/sign-in/reset/verify", send: "/sign-in/reset/email", cancel: "/sign-in/reset/cancel", sent: "reset.sent", back: "reset.back" },
} as const;

/**
 * The code step, for a sign-in, a sign-up or a password reset. The words hold for every address:
 * for one without an account (or, for a reset, without a password) no code is sent, so the page
 * says "if", and a sign-up's message may be the account-exists one.
 */
export function EmailCodeEntry({ view, purpose, error }: { view: View; purpose: keyof typeof CODE_FORMS; error?: string }) {
  const t = translator(view.locale);
  const form = { basePath: view.basePath, txId: view.txId, csrf: view.csrf };
  const paths = CODE_FORMS[purpose];
  const pending = purpose === "sign_up" ? view.email.signUp : purpose === "reset" ? view.passwordReset : view.email;
  const address = pending.codeSentTo ?? "";
  return (
    <div>
      <FormError message={error} />
      <p className="mt-4 text-sm text-slate-600">
        <WithStrong text={t(paths.sent, { address: STRONG_MARK })} strong={address} /> {t("emailCode.validFor", { minutes: view.email.codeMinutes })}
      </p>
      {pending.codeDead ? (
        <p className="mt-4 text-sm text-slate-600">{t("emailCode.dead")}</p>
      ) : (
        <StepForm {...form} path={paths.verify} className="mt-4 space-y-4">
          <div>
            <label htmlFor="code" className="block text-sm font-medium text-slate-700">
              {t("emailCode.code")}
            </label>
            <input
              id="code"
              name="code"
              type="text"
              inputMode="numeric"
              autoComplete="one-time-code"
              pattern="[0-9 \-]*"
              maxLength={12}
              required
              autoFocus
              className={`${inputClass} tracking-widest`}
            />
          </div>
          <button type="submit" className={primaryButtonClass}>
            {t("signIn.continue")}
          </button>
        </StepForm>
      )}
      <StepForm {...form} path={paths.send} className="mt-3">
        <input type="hidden" name="email" value={address} />
        <button type="submit" className={secondaryButtonClass}>
          {t("emailCode.resend")}
        </button>
      </StepForm>
      <StepForm {...form} path={paths.cancel} className="mt-4 text-center">
        {purpose === "sign_up" ? <input type="hidden" name="then" value="sign_up" /> : null}
        <button type="submit" className={linkButtonClass}>
          {t(paths.back)}
        </button>
      </StepForm>
    </div>
  );
}
