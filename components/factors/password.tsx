import { Divider, inputClass, primaryButtonClass, StepForm } from "@/components/hosted/steps/step-form";
import { PasswordInput } from "@/components/hosted/password-input";
import { PortalForm } from "@/components/portal/portal-form";
import type { FactorParts, PortalPartProps, StepPartProps } from "./types";

/** After an email code, the password is the factor that makes the sign-in multi-factor. */
function PasswordSecondFactor({ view, t, after, lead }: StepPartProps) {
  if (!view.userEmail) return null;
  return (
    <>
      {after ? <Divider label={t("signIn.or")} /> : null}
      <StepForm basePath={view.basePath} txId={view.txId} csrf={view.csrf} path="/sign-in/password" className="mt-4 space-y-4">
        {/* The account's address as the form's username: password managers match the saved password by it. */}
        <input type="text" name="email" autoComplete="username" value={view.userEmail} readOnly hidden />
        <div>
          <label htmlFor="password" className="block text-sm font-medium text-slate-700">
            {t("signIn.password")}
          </label>
          <PasswordInput id="password" name="password" autoComplete="current-password" required autoFocus={lead} toggleLabel={t("signIn.showPassword")} />
        </div>
        <button type="submit" className={primaryButtonClass}>
          {t("signIn.continue")}
        </button>
      </StepForm>
    </>
  );
}

function PasswordPortal({ view, t, after }: PortalPartProps) {
  return (
    <>
      {after ? <Divider label={t("signIn.or")} /> : null}
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
  );
}

export const PASSWORD_PARTS: FactorParts = {
  secondFactor: { Part: PasswordSecondFactor, takesFocus: true },
  enrol: null,
  portal: { primary: PasswordPortal, mfa: null, shown: () => true, leads: false },
};
