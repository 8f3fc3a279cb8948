import type { TypedCodeAnswer } from "@/lib/authn/factors/contract";
import { Divider, OneTimeCodeField, primaryButtonClass, StepForm } from "@/components/hosted/steps/step-form";
import { PortalForm } from "@/components/portal/portal-form";
import type { FactorParts, PortalPartProps, StepPartProps } from "./types";

/**
 * The parts of a factor answered by a typed code (lib/authn/factors/contract.ts `TypedCodeAnswer`),
 * drawn from its answer alone: at the second-factor step a code field under the answer's `label`
 * posted to its `signInPath`, in the portal the same field posted to its `portalPath`. A factor
 * with parts of its own (components/factors/index.ts) may take these and add its enrolment; one
 * without any is shown with these, nothing to enrol at the sign-in.
 */
export function typedCodeParts(answer: TypedCodeAnswer): FactorParts {
  const name = answer.kind.replaceAll("_", "-");

  function SecondFactor({ view, t }: StepPartProps) {
    return (
      <StepForm basePath={view.basePath} txId={view.txId} csrf={view.csrf} path={answer.signInPath} className="mt-4 space-y-4">
        <div>
          <OneTimeCodeField id={`${name}-code`} label={answer.label[view.locale]} autoFocus />
        </div>
        <button type="submit" className={primaryButtonClass}>
          {t("mfa.verify")}
        </button>
      </StepForm>
    );
  }

  function Portal({ view, t, locale, after }: PortalPartProps) {
    return (
      <>
        {after ? <Divider label={t("signIn.or")} /> : null}
        <PortalForm view={view} path={answer.portalPath}>
          <OneTimeCodeField id={`portal-${name}`} label={answer.label[locale]} />
          <button type="submit" className={primaryButtonClass}>
            {t("portal.verify.confirm")}
          </button>
        </PortalForm>
      </>
    );
  }

  return {
    secondFactor: { Part: SecondFactor, takesFocus: true },
    enrol: null,
    portal: { primary: null, mfa: Portal, shown: () => true, leads: false },
  };
}
