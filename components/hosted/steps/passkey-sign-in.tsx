import type { SignInView } from "@/lib/sign-in/view";

type View = Extract<SignInView, { kind: "step" }>;

/** "Sign in with a passkey" and passkey autofill. Stub until the WebAuthn factor lands. */
export function PasskeySignIn(_props: { view: View }) {
  return null;
}
