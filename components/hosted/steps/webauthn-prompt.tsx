import { signInFormMessage } from "@/lib/hosted/errors";
import type { SignInView } from "@/lib/sign-in/view";
import { WebAuthnForm } from "../webauthn-form";

type View = Extract<SignInView, { kind: "step" }>;

const UNSUPPORTED = "This browser cannot use security keys or passkeys. Use another method or another browser.";

/** "Use your security key" (or passkey) at the second-factor step. */
export function SecurityKeyPrompt({ view }: { view: View }) {
  if (view.step.kind !== "second_factor" || !view.webauthn.options) return null;
  const options = new Set(view.step.options);
  const label =
    options.has("security_key") && options.has("passkey") ? "Use a security key or passkey" : options.has("passkey") ? "Use your passkey" : "Use your security key";
  return (
    <WebAuthnForm
      basePath={view.basePath}
      txId={view.txId}
      csrf={view.csrf}
      path="/sign-in/webauthn"
      ceremony="get"
      optionsJSON={view.webauthn.options}
      label={label}
      primary={!options.has("totp")}
      failedMessage={signInFormMessage("webauthn_failed")!}
      unsupportedMessage={UNSUPPORTED}
    />
  );
}

/** "Add a security key" / "Add a passkey" at the enrolment step: the new credential becomes the user's second factor. */
export function WebAuthnEnrollPrompt({ view }: { view: View }) {
  const creation = view.webauthn.creation;
  if (view.step.kind !== "enroll_second_factor" || !creation) return null;
  const form = { basePath: view.basePath, txId: view.txId, csrf: view.csrf, path: "/sign-in/webauthn/register", ceremony: "create" as const };
  const failedMessage = signInFormMessage("enrollment_failed")!;
  return (
    <div className="space-y-3">
      <p className="text-sm text-slate-600">Or use a security key, or a passkey on this device or your phone.</p>
      {creation.securityKey ? (
        <WebAuthnForm {...form} optionsJSON={creation.securityKey} kind="security_key" label="Add a security key" failedMessage={failedMessage} unsupportedMessage={UNSUPPORTED} />
      ) : null}
      {creation.passkey ? <WebAuthnForm {...form} optionsJSON={creation.passkey} kind="passkey" label="Add a passkey" failedMessage={failedMessage} /> : null}
    </div>
  );
}
