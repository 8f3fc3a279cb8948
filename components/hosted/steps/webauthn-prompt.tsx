import type { SignInView } from "@/lib/sign-in/view";

type View = Extract<SignInView, { kind: "step" }>;

/** "Use your security key or passkey" at the second-factor step. Stub until the WebAuthn factor lands. */
export function SecurityKeyPrompt(_props: { view: View }) {
  return null;
}

/** "Add a security key or passkey" at the enrolment step. Stub until the WebAuthn factor lands. */
export function WebAuthnEnrollPrompt(_props: { view: View }) {
  return null;
}
