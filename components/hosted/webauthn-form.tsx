"use client";

import { useEffect, useRef, useState, useSyncExternalStore } from "react";
import {
  browserSupportsWebAuthn,
  browserSupportsWebAuthnAutofill,
  startAuthentication,
  startRegistration,
  WebAuthnAbortService,
} from "@simplewebauthn/browser";
import { Divider, FormError, primaryButtonClass, secondaryButtonClass, StepForm, type Separator, type StepFormProps } from "./steps/step-form";

const noSubscription = () => () => {};
/** "unknown" while rendering on the server and hydrating; then whether this browser has WebAuthn. */
function useWebAuthnSupport(): "unknown" | "yes" | "no" {
  return useSyncExternalStore(
    noSubscription,
    () => (browserSupportsWebAuthn() ? "yes" : "no"),
    () => "unknown",
  );
}

/** Posts the browser's answer in the form of the hidden `response` field. */
function submitAnswer(field: HTMLInputElement | null, answer: unknown): void {
  if (!field?.form) return;
  field.value = JSON.stringify(answer);
  field.form.requestSubmit();
}

export interface WebAuthnFormProps extends StepFormProps {
  /** The step endpoint under the issuer, e.g. "/sign-in/passkey". */
  path: string;
  /** "get": an assertion (navigator.credentials.get); "create": a new credential. */
  ceremony: "get" | "create";
  /** The options JSON the server rendered (with its challenge), handed to the browser as is. */
  optionsJSON: string;
  label: string;
  /** Posted as `kind` with a new credential: "passkey" or "security_key". */
  kind?: "passkey" | "security_key";
  /** Also offer the passkeys in the page's `autocomplete="username webauthn"` field (conditional UI). */
  autofill?: boolean;
  /** Shown when the browser's prompt fails or is dismissed. */
  failedMessage: string;
  /** Shown instead of the button when the browser has no WebAuthn. */
  unsupportedMessage?: string;
  primary?: boolean;
  /**
   * What goes above the button, only when it is drawn (without WebAuthn there is nothing to
   * separate): an "or" divider, a gap (it follows another way's button), or nothing (the default).
   */
  separator?: Separator;
  /** The divider's word in the page's language. */
  dividerLabel?: string;
}

/**
 * A WebAuthn step as a plain form: the browser's prompt runs on the button (or on passkey
 * autofill), and its JSON answer is posted in the hidden `response` field with the form's
 * transaction and CSRF token. Without JavaScript nothing renders: the page's other forms remain.
 */
export function WebAuthnForm({ path, ceremony, optionsJSON, label, kind, autofill, failedMessage, unsupportedMessage, primary, separator = "none", dividerLabel, ...form }: WebAuthnFormProps) {
  const support = useWebAuthnSupport();
  const response = useRef<HTMLInputElement>(null);
  const [failed, setFailed] = useState(false);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!autofill || ceremony !== "get" || support !== "yes") return;
    let active = true;
    void browserSupportsWebAuthnAutofill().then((available) => {
      if (!available || !active) return;
      startAuthentication({ optionsJSON: JSON.parse(optionsJSON), useBrowserAutofill: true }).then(
        (answer) => {
          if (active) submitAnswer(response.current, answer);
        },
        // Dismissed, aborted by the button, or no autofill field: the button still works.
        () => undefined,
      );
    });
    return () => {
      active = false;
      WebAuthnAbortService.cancelCeremony();
    };
  }, [autofill, ceremony, optionsJSON, support]);

  const run = async () => {
    setFailed(false);
    setBusy(true);
    try {
      const options = JSON.parse(optionsJSON);
      submitAnswer(response.current, ceremony === "get" ? await startAuthentication({ optionsJSON: options }) : await startRegistration({ optionsJSON: options }));
    } catch {
      setFailed(true);
      setBusy(false);
    }
  };

  if (support === "unknown") return null;
  if (support === "no") return unsupportedMessage ? <p className="text-sm text-slate-600">{unsupportedMessage}</p> : null;
  return (
    <>
      {separator === "or" ? <Divider label={dividerLabel} /> : null}
      <StepForm {...form} path={path} className={separator === "gap" ? "mt-3 space-y-3" : "space-y-3"}>
        {kind ? <input type="hidden" name="kind" value={kind} /> : null}
        <input ref={response} type="hidden" name="response" defaultValue="" />
        {failed ? <FormError message={failedMessage} /> : null}
        <button type="button" onClick={run} disabled={busy} className={primary ? primaryButtonClass : secondaryButtonClass}>
          {label}
        </button>
      </StepForm>
    </>
  );
}
