import type { SignInView } from "@/lib/sign-in/view";
import { translator } from "@/lib/i18n/translate";
import { Divider, FormError, inputClass, primaryButtonClass, StepForm, type Separator } from "./step-form";
import { EmailCodeRequest } from "./email-code";
import { PasskeySignIn } from "./passkey-sign-in";
import { SignUpLink } from "./sign-up";
import { FederationOptions, LinkAccountNotice } from "./federation";
import { PasswordInput } from "../password-input";
import { ForgotPasswordLink } from "./password-reset";
import { EMAIL_CODE_EVIDENCE } from "@/lib/authn/factors/email-code/evidence";

type View = Extract<SignInView, { kind: "step" }>;

/**
 * What goes above a way to sign in, after the ways above it: one "or" below a form with fields (the
 * password form, or the email-code form when there is no password), then the other ways follow
 * each other with a gap, not an "or" above each button (`buttonsAbove`: what is just above is a
 * button, the passkey's).
 */
function separatorAfter(passwordAbove: boolean, otherWaysAbove: boolean, buttonsAbove = false): Separator {
  if (passwordAbove) return otherWaysAbove ? "gap" : "or";
  if (!otherWaysAbove) return "none";
  return buttonsAbove ? "gap" : "or";
}

/** The password form's id: "Email me a code" submits its email field too. */
const PASSWORD_FORM_ID = "password-form";

/**
 * The first step: the methods the application's policy allows, in one card. The password and
 * email-code forms are plain forms (no JavaScript needed); the passkey button and the passkey
 * autofill in the email field are added by script.
 */
export function FirstFactor({ view, error, email: typedEmail }: { view: View; error?: string; /** The address to show again in the form (after a failed password). */ email?: string | null }) {
  const t = translator(view.locale);
  const allowed = new Set(view.policy.firstFactors);
  const form = { basePath: view.basePath, txId: view.txId, csrf: view.csrf };
  const password = allowed.has("password");
  const email = allowed.has(EMAIL_CODE_EVIDENCE.method) && view.email.available;
  const passkey = allowed.has("passkey");
  const knownEmail = view.federation.linking?.email ?? typedEmail ?? undefined;
  // Password managers fill the identifier as "username"; "webauthn" also offers passkeys in it (conditional UI).
  const identifier = passkey ? "username webauthn" : "username";
  return (
    <div>
      <LinkAccountNotice view={view} />
      <FormError message={error} />
      {password ? (
        <StepForm {...form} path="/sign-in/password" className="mt-4 space-y-4" id={PASSWORD_FORM_ID}>
          <div>
            <label htmlFor="email" className="block text-sm font-medium text-slate-700">
              {t("signIn.email")}
            </label>
            <input id="email" name="email" type="email" autoComplete={identifier} required autoFocus={!knownEmail} className={inputClass} defaultValue={knownEmail} />
          </div>
          <div>
            <label htmlFor="password" className="block text-sm font-medium text-slate-700">
              {t("signIn.password")}
            </label>
            <PasswordInput id="password" name="password" autoComplete="current-password" required autoFocus={!!knownEmail} toggleLabel={t("signIn.showPassword")} />
          </div>
          {view.passwordReset.available ? <ForgotPasswordLink view={view} /> : null}
          <button type="submit" className={primaryButtonClass}>
            {t("signIn.submit")}
          </button>
        </StepForm>
      ) : null}
      {email ? (
        <>
          {password ? <Divider label={t("signIn.or")} /> : null}
          <EmailCodeRequest view={view} passwordFormId={password ? PASSWORD_FORM_ID : null} autoComplete={identifier} defaultEmail={knownEmail} />
        </>
      ) : null}
      {passkey ? <PasskeySignIn view={view} separator={separatorAfter(password, email)} /> : null}
      <FederationOptions view={view} separator={separatorAfter(password, email || passkey, passkey)} />
      {!password && !email && !passkey && view.federation.buttons.length === 0 && !view.federation.sso ? <p className="text-sm text-slate-600">{t("signIn.noMethod")}</p> : null}
      {view.email.signUp.available ? <SignUpLink view={view} /> : null}
    </div>
  );
}
