import { partsOf, type StepView } from "@/components/factors";
import { translator } from "@/lib/i18n/translate";
import { FormError } from "./step-form";

/**
 * The enrolment step: the application requires two-step verification and the user has no second
 * factor yet. Each kind offered, through its factor's part (components/factors): an authenticator
 * app (a QR code and the secret, confirmed by a first code), or a security key or passkey.
 */
export function EnrollSecondFactor({ view, error }: { view: StepView; error?: string }) {
  if (view.step.kind !== "enroll_second_factor") return null;
  const t = translator(view.locale);
  const parts = partsOf(view.step.options).flatMap((p) => (p.enrol ? [p.enrol] : []));
  return (
    <div>
      <p className="text-sm text-slate-600">{t("mfa.enrollIntro", { application: view.applicationName })}</p>
      <div className="mt-4">
        <FormError message={error} />
      </div>
      {parts.map(({ Part }, i) => (
        <Part key={i} view={view} t={t} after={i > 0} lead={i === 0} />
      ))}
      {parts.map(({ After }, i) => (After ? <After key={i} view={view} t={t} after lead={false} /> : null))}
    </div>
  );
}
