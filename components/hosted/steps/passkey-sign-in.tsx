import { signInFormMessage } from "@/lib/hosted/errors";
import type { SignInView } from "@/lib/sign-in/view";
import { WebAuthnForm } from "../webauthn-form";

type View = Extract<SignInView, { kind: "step" }>;

/** "Sign in with a passkey", and the passkeys offered in the email field's autofill. Needs JavaScript; renders nothing without it. */
export function PasskeySignIn({ view, divider = false }: { view: View; divider?: boolean }) {
  if (!view.webauthn.options) return null;
  return (
    <WebAuthnForm
      basePath={view.basePath}
      txId={view.txId}
      csrf={view.csrf}
      path="/sign-in/passkey"
      ceremony="get"
      optionsJSON={view.webauthn.options}
      autofill
      divider={divider}
      label="Sign in with a passkey"
      failedMessage={signInFormMessage("webauthn_failed")!}
    />
  );
}
