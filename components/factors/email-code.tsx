import { Divider, OneTimeCodeField, primaryButtonClass, secondaryButtonClass } from "@/components/hosted/steps/step-form";
import { PortalForm } from "@/components/portal/portal-form";
import type { FactorParts, PortalPartProps } from "./types";

/** An emailed code in the portal: the code's field once one is sent, and the button that sends one. */
function EmailCodePortal({ view, t }: PortalPartProps) {
  return (
    <>
      <Divider label={t("signIn.or")} />
      {view.emailCodeSent ? (
        <PortalForm view={view} path="/account/verify/email/code">
          <OneTimeCodeField id="portal-email-code" label={t("portal.verify.emailCode")} />
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
  );
}

/** Its sign-in steps are the first step's (components/hosted/steps/email-code.tsx). */
export const EMAIL_CODE_PARTS: FactorParts = {
  secondFactor: null,
  enrol: null,
  portal: { primary: EmailCodePortal, mfa: null, shown: () => true, leads: false },
};
