import { partsOf, type StepView } from "@/components/factors";
import { translator } from "@/lib/i18n/translate";
import { FormError } from "./step-form";

/**
 * The second-factor step: the user's enrolled second factors (an authenticator code, a security
 * key or passkey; the password after an email code), and a recovery code in place of any of them,
 * each factor's part (components/factors) in the order the policy offers them.
 */
export function SecondFactor({ view, error }: { view: StepView; error?: string }) {
  if (view.step.kind !== "second_factor") return null;
  const t = translator(view.locale);
  const parts = partsOf(view.step.options).flatMap((p) => (p.secondFactor ? [p.secondFactor] : []));
  return (
    <div>
      <FormError message={error} />
      {parts.map(({ Part }, i) => (
        <Part key={i} view={view} t={t} after={i > 0} lead={!parts.slice(0, i).some((p) => p.takesFocus)} />
      ))}
    </div>
  );
}

