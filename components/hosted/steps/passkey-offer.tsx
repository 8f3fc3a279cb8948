import { signInFormMessage } from "@/lib/hosted/errors";
import type { SignInView } from "@/lib/sign-in/view";
import { WebAuthnForm } from "../webauthn-form";
import { FormError, secondaryButtonClass, StepForm } from "./step-form";

type View = Extract<SignInView, { kind: "step" }>;

/**
 * After signing in, a user without a passkey is offered one (policy `passkeyEnrollment`): "Add a
 * passkey", or "Not now" unless the application requires one. "Not now" is a plain form.
 */
export function PasskeyOffer({ view, error }: { view: View; error?: string }) {
  if (view.step.kind !== "passkey_offer") return null;
  const required = view.step.required;
  const form = { basePath: view.basePath, txId: view.txId, csrf: view.csrf };
  return (
    <div className="space-y-4">
      <p className="text-sm text-slate-600">
        {required ? `${view.applicationName} requires a passkey. ` : ""}A passkey lets you sign in with your fingerprint, face or screen lock instead of a password.
      </p>
      <FormError message={error} />
      {view.webauthn.creation?.passkey ? (
        <WebAuthnForm
          {...form}
          path="/sign-in/webauthn/register"
          ceremony="create"
          optionsJSON={view.webauthn.creation.passkey}
          kind="passkey"
          label="Add a passkey"
          primary
          failedMessage={signInFormMessage("enrollment_failed")!}
          unsupportedMessage="This browser cannot create passkeys."
        />
      ) : null}
      {required ? (
        <noscript>
          <p className="text-sm text-slate-600">Adding a passkey needs JavaScript. Turn it on and reload this page.</p>
        </noscript>
      ) : (
        <StepForm {...form} path="/sign-in/passkey/skip">
          <button type="submit" className={secondaryButtonClass}>
            Not now
          </button>
        </StepForm>
      )}
    </div>
  );
}
