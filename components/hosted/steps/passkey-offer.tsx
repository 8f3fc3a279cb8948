import { signInFormMessage } from "@/lib/hosted/errors";
import type { SignInView } from "@/lib/sign-in/view";
import { translator } from "@/lib/i18n/translate";
import { WebAuthnForm } from "../webauthn-form";
import { FormError, secondaryButtonClass, StepForm } from "./step-form";

type View = Extract<SignInView, { kind: "step" }>;

/**
 * After signing in, a user without a passkey is offered one (policy `passkeyEnrollment`): "Add a
 * passkey", or "Not now" unless the application requires one. "Not now" is a plain form.
 */
export function PasskeyOffer({ view, error }: { view: View; error?: string }) {
  if (view.step.kind !== "passkey_offer") return null;
  const t = translator(view.locale);
  const required = view.step.required;
  const form = { basePath: view.basePath, txId: view.txId, csrf: view.csrf };
  return (
    <div className="space-y-4">
      <p className="text-sm text-slate-600">
        {required ? `${t("passkey.required", { application: view.applicationName })} ` : ""}
        {t("passkey.explain")}
      </p>
      <FormError message={error} />
      {view.webauthn.creation?.passkey ? (
        <WebAuthnForm
          {...form}
          path="/sign-in/webauthn/register"
          ceremony="create"
          optionsJSON={view.webauthn.creation.passkey}
          kind="passkey"
          label={t("passkey.add")}
          primary
          failedMessage={signInFormMessage("enrollment_failed", view.locale)!}
          unsupportedMessage={t("passkey.cannotCreate")}
        />
      ) : null}
      {required ? (
        <noscript>
          <p className="text-sm text-slate-600">{t("passkey.needsScript")}</p>
        </noscript>
      ) : (
        <StepForm {...form} path="/sign-in/passkey/skip">
          <button type="submit" className={secondaryButtonClass}>
            {t("passkey.notNow")}
          </button>
        </StepForm>
      )}
    </div>
  );
}
