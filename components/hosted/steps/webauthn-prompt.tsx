import { signInFormMessage } from "@/lib/hosted/errors";
import type { SignInView } from "@/lib/sign-in/view";
import { translator } from "@/lib/i18n/translate";
import { WebAuthnForm } from "../webauthn-form";

type View = Extract<SignInView, { kind: "step" }>;

/** "Use your security key" (or passkey) at the second-factor step; `primary`: the step's primary button (no typed code before it). */
export function SecurityKeyPrompt({ view, primary }: { view: View; primary: boolean }) {
  if (view.step.kind !== "second_factor" || !view.webauthn.options) return null;
  const t = translator(view.locale);
  const options = new Set(view.step.options);
  const label = t(options.has("security_key") && options.has("passkey") ? "passkey.useEither" : options.has("passkey") ? "passkey.usePasskey" : "passkey.useSecurityKey");
  return (
    <WebAuthnForm
      basePath={view.basePath}
      txId={view.txId}
      csrf={view.csrf}
      path="/sign-in/webauthn"
      ceremony="get"
      optionsJSON={view.webauthn.options}
      label={label}
      primary={primary}
      failedMessage={signInFormMessage("webauthn_failed", view.locale)!}
      unsupportedMessage={t("passkey.unsupported")}
    />
  );
}

/** "Add a security key" / "Add a passkey" at the enrolment step: the new credential becomes the user's second factor. */
export function WebAuthnEnrollPrompt({ view }: { view: View }) {
  const creation = view.webauthn.creation;
  if (view.step.kind !== "enroll_second_factor" || !creation) return null;
  const form = { basePath: view.basePath, txId: view.txId, csrf: view.csrf, path: "/sign-in/webauthn/register", ceremony: "create" as const };
  const t = translator(view.locale);
  const failedMessage = signInFormMessage("enrollment_failed", view.locale)!;
  return (
    <div className="space-y-3">
      <p className="text-sm text-slate-600">{t("passkey.enrollIntro")}</p>
      {creation.securityKey ? (
        <WebAuthnForm {...form} optionsJSON={creation.securityKey} kind="security_key" label={t("passkey.addSecurityKey")} failedMessage={failedMessage} unsupportedMessage={t("passkey.unsupported")} />
      ) : null}
      {creation.passkey ? <WebAuthnForm {...form} optionsJSON={creation.passkey} kind="passkey" label={t("passkey.add")} failedMessage={failedMessage} /> : null}
    </div>
  );
}
