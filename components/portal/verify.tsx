import type { PortalView } from "@/lib/account-security/portal-view";
import type { VerifyPlan } from "@/lib/account-security/evidence";
import { hostedErrorText } from "@/lib/hosted/errors";
import { WebAuthnForm } from "@/components/hosted/webauthn-form";
import { Divider, inputClass, primaryButtonClass, secondaryButtonClass } from "@/components/hosted/steps/step-form";
import { PortalForm } from "./portal-form";
import { PortalSection } from "./frame";

const REASON: Record<VerifyPlan["reason"], string> = {
  provider_only: "",
  primary: "Before you change your security settings, confirm it's you. A confirmation counts for 10 minutes.",
  mfa: "Confirm with your second step as well: an authenticator app, a security key, a passkey or a recovery code.",
  stronger: "This change needs a stronger confirmation: use a passkey or security key if you have one.",
};

/**
 * The re-verification panel (lib/account-security/evidence.ts): what the user can confirm with
 * now. `plan` is the verdict of the change being made (the credentials sections pass theirs);
 * without it, the verdict for adding a credential. An account that signs in only through its
 * identity provider is told why it cannot change anything here.
 */
export function VerifySection({ view, plan }: { view: PortalView; plan?: VerifyPlan }) {
  const verdict = plan ?? (view.addVerdict.ok ? null : view.addVerdict.verify);
  if (!verdict) {
    return (
      <PortalSection title="Confirmed">
        <p className="text-sm text-slate-600">You recently confirmed it&apos;s you: you can change your security settings for 10 minutes.</p>
      </PortalSection>
    );
  }
  if (verdict.reason === "provider_only") {
    const text = hostedErrorText("portal_provider_only");
    return (
      <PortalSection title={text.title}>
        <p className="text-sm text-slate-600">{text.message}</p>
      </PortalSection>
    );
  }
  const primary = verdict.reason === "primary";
  const form = { basePath: view.basePath, txId: "", csrf: view.csrf };
  const webauthn = view.webauthnOptions && (primary ? verdict.primary.includes("passkey") : verdict.mfa.some((m) => m === "passkey" || m === "security_key"));
  return (
    <PortalSection title="Confirm it's you">
      <p className="mb-3 text-sm text-slate-600">{REASON[verdict.reason]}</p>
      {webauthn ? (
        <WebAuthnForm
          {...form}
          path="/account/verify/webauthn"
          ceremony="get"
          optionsJSON={view.webauthnOptions!}
          label={primary ? "Use a passkey" : "Use a passkey or security key"}
          failedMessage="The passkey or security key could not be used. Try again or use another way."
          primary
        />
      ) : null}
      {primary && verdict.primary.includes("password") ? (
        <>
          {webauthn ? <Divider /> : null}
          <PortalForm view={view} path="/account/verify/password">
            <label htmlFor="portal-password" className="block text-sm font-medium text-slate-700">
              Password
            </label>
            <input id="portal-password" name="password" type="password" autoComplete="current-password" required className={inputClass} />
            <button type="submit" className={primaryButtonClass}>
              Confirm with password
            </button>
          </PortalForm>
        </>
      ) : null}
      {primary && verdict.primary.includes("email_otp") ? (
        <>
          <Divider />
          {view.emailCodeSent ? (
            <PortalForm view={view} path="/account/verify/email/code">
              <label htmlFor="portal-email-code" className="block text-sm font-medium text-slate-700">
                Code from the email we sent you
              </label>
              <input id="portal-email-code" name="code" type="text" inputMode="numeric" pattern="[0-9 ]*" maxLength={8} autoComplete="one-time-code" required className={inputClass} />
              <button type="submit" className={primaryButtonClass}>
                Confirm with the code
              </button>
            </PortalForm>
          ) : null}
          <PortalForm view={view} path="/account/verify/email" className="mt-3">
            <button type="submit" className={secondaryButtonClass}>
              {view.emailCodeSent ? "Send a new code" : "Email me a code"}
            </button>
          </PortalForm>
        </>
      ) : null}
      {!primary && verdict.mfa.includes("totp") ? (
        <>
          {webauthn ? <Divider /> : null}
          <PortalForm view={view} path="/account/verify/totp">
            <label htmlFor="portal-totp" className="block text-sm font-medium text-slate-700">
              Code from your authenticator app
            </label>
            <input id="portal-totp" name="code" type="text" inputMode="numeric" pattern="[0-9 ]*" maxLength={8} autoComplete="one-time-code" required className={inputClass} />
            <button type="submit" className={primaryButtonClass}>
              Confirm
            </button>
          </PortalForm>
        </>
      ) : null}
      {!primary && verdict.mfa.includes("recovery_code") ? (
        <PortalForm view={view} path="/account/verify/recovery-code" className="mt-4 space-y-3">
          <label htmlFor="portal-recovery" className="block text-sm font-medium text-slate-700">
            Or a recovery code
          </label>
          <input id="portal-recovery" name="code" type="text" autoComplete="off" required className={inputClass} />
          <button type="submit" className={secondaryButtonClass}>
            Confirm with a recovery code
          </button>
        </PortalForm>
      ) : null}
    </PortalSection>
  );
}
