import { TOTP_FACTOR } from "@/lib/authn/factors/totp";
import { OneTimeCodeField, primaryButtonClass, secondaryButtonClass, StepForm } from "@/components/hosted/steps/step-form";
import { typedCodeParts } from "./typed-code";
import type { FactorParts, StepPartProps } from "./types";

const formOf = (view: StepPartProps["view"]) => ({ basePath: view.basePath, txId: view.txId, csrf: view.csrf });

/** The base32 secret in groups of four, easier to type into an app that cannot scan. */
const grouped = (secret: string) => secret.match(/.{1,4}/g)?.join(" ") ?? secret;

/** Setting up an authenticator app: a QR code and the secret, confirmed by a first code; or the button that starts it. */
function TotpEnrol({ view, t }: StepPartProps) {
  const enrollment = view.totp.enrollment;
  const form = formOf(view);
  return enrollment ? (
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
          <OneTimeCodeField id="totp-code" label={t("mfa.appCode")} autoFocus />
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
  );
}

/** Under the enrolment options, while a setup is under way: a new secret. */
function TotpEnrolAfter({ view, t }: StepPartProps) {
  if (!view.totp.enrollment) return null;
  return (
    <StepForm {...formOf(view)} path="/sign-in/totp/enroll/start" className="mt-4">
      <button type="submit" className={secondaryButtonClass}>
        {t("mfa.newKey")}
      </button>
    </StepForm>
  );
}

/** A typed code's parts at the second-factor step and in the portal (./typed-code.tsx), and its own enrolment. */
export const TOTP_PARTS: FactorParts = {
  ...typedCodeParts(TOTP_FACTOR.answer),
  enrol: { Part: TotpEnrol, After: TotpEnrolAfter },
};
