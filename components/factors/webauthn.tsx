import { WebAuthnForm } from "@/components/hosted/webauthn-form";
import { Divider } from "@/components/hosted/steps/step-form";
import { SecurityKeyPrompt, WebAuthnEnrollPrompt } from "@/components/hosted/steps/webauthn-prompt";
import type { FactorParts, PortalPartProps, StepPartProps } from "./types";

/** The user's security keys and passkeys at the second-factor step: the primary button unless a typed code leads. */
function WebAuthnSecondFactor({ view, t, after, lead }: StepPartProps) {
  return (
    <>
      {after ? <Divider label={t("signIn.or")} /> : null}
      <SecurityKeyPrompt view={view} primary={lead} />
    </>
  );
}

function WebAuthnEnrol({ view, t, after }: StepPartProps) {
  return (
    <>
      {after ? <Divider label={t("signIn.or")} /> : null}
      <WebAuthnEnrollPrompt view={view} />
    </>
  );
}

/** A passkey (primary verification), or a passkey or security key (a further factor): one ceremony. */
function WebAuthnPortal({ view, t, verdict }: PortalPartProps) {
  const primary = verdict.reason === "primary";
  return (
    <WebAuthnForm
      basePath={view.basePath}
      txId=""
      csrf={view.csrf}
      path="/account/verify/webauthn"
      ceremony="get"
      optionsJSON={view.webauthnOptions!}
      label={t(primary ? "portal.verify.usePasskey" : "portal.verify.usePasskeyOrKey")}
      failedMessage={t("portal.verify.webauthnFailed")}
      primary
    />
  );
}

export const WEBAUTHN_PARTS: FactorParts = {
  secondFactor: { Part: WebAuthnSecondFactor, takesFocus: false },
  enrol: { Part: WebAuthnEnrol, After: null },
  portal: { primary: WebAuthnPortal, mfa: WebAuthnPortal, shown: (view) => Boolean(view.webauthnOptions), leads: true },
};
