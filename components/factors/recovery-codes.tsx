import { RECOVERY_CODES_FACTOR } from "@/lib/authn/factors/recovery-codes";
import { inputClass, secondaryButtonClass, StepForm } from "@/components/hosted/steps/step-form";
import { PortalForm } from "@/components/portal/portal-form";
import type { FactorParts, PortalPartProps, StepPartProps } from "./types";

/** A recovery code in place of the second factor, folded away under the factors it stands in for. */
function RecoveryCodeSecondFactor({ view, t }: StepPartProps) {
  return (
    <details className="mt-6 text-sm">
      <summary className="cursor-pointer text-slate-600 hover:text-slate-900">{t("mfa.useRecoveryCode")}</summary>
      <StepForm basePath={view.basePath} txId={view.txId} csrf={view.csrf} path="/sign-in/recovery-code" className="mt-3 space-y-3">
        <div>
          <label htmlFor="recovery-code" className="block text-sm font-medium text-slate-700">
            {RECOVERY_CODES_FACTOR.answer.label[view.locale]}
          </label>
          <input id="recovery-code" name="code" type="text" autoComplete="off" spellCheck={false} maxLength={64} required placeholder="xxxx-xxxxxxxx-xxxxxxxx" className={`${inputClass} font-mono`} />
        </div>
        <button type="submit" className={secondaryButtonClass}>
          {t("mfa.submitRecoveryCode")}
        </button>
      </StepForm>
    </details>
  );
}

function RecoveryCodePortal({ view, t }: PortalPartProps) {
  return (
    <PortalForm view={view} path="/account/verify/recovery-code" className="mt-4 space-y-3">
      <label htmlFor="portal-recovery" className="block text-sm font-medium text-slate-700">
        {t("portal.verify.orRecovery")}
      </label>
      <input id="portal-recovery" name="code" type="text" autoComplete="off" required className={inputClass} />
      <button type="submit" className={secondaryButtonClass}>
        {t("portal.verify.withRecovery")}
      </button>
    </PortalForm>
  );
}

/** The codes shown once after enrolment are components/hosted/steps/recovery-codes.tsx. */
export const RECOVERY_CODES_PARTS: FactorParts = {
  secondFactor: { Part: RecoveryCodeSecondFactor, takesFocus: false },
  enrol: null,
  portal: { primary: null, mfa: RecoveryCodePortal, shown: () => true, leads: false },
};
