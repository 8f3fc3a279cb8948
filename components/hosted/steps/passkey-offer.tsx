import type { SignInView } from "@/lib/sign-in/view";

type View = Extract<SignInView, { kind: "step" }>;

/** The passkey offer step. Stub until its factor lands. */
export function PasskeyOffer({ view }: { view: View; error?: string }) {
  return <p className="text-sm text-slate-600">This step ({view.step.kind}) is not available yet.</p>;
}
