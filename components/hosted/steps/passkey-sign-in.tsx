import { signInFormMessage } from "@/lib/hosted/errors";
import type { SignInView } from "@/lib/sign-in/view";
import { translator } from "@/lib/i18n/translate";
import { WebAuthnForm } from "../webauthn-form";
import type { Separator } from "./step-form";

type View = Extract<SignInView, { kind: "step" }>;

/** "Sign in with a passkey", and the passkeys offered in the email field's autofill. Needs JavaScript; renders nothing without it. */
export function PasskeySignIn({ view, separator = "none" }: { view: View; separator?: Separator }) {
  if (!view.webauthn.options) return null;
  const t = translator(view.locale);
  return (
    <WebAuthnForm
      basePath={view.basePath}
      txId={view.txId}
      csrf={view.csrf}
      path="/sign-in/passkey"
      ceremony="get"
      optionsJSON={view.webauthn.options}
      autofill
      separator={separator}
      dividerLabel={t("signIn.or")}
      label={t("passkey.signIn")}
      failedMessage={signInFormMessage("webauthn_failed", view.locale)!}
    />
  );
}
