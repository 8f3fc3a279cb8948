import type { SignInView } from "@/lib/sign-in/view";

type View = Extract<SignInView, { kind: "step" }>;

/** The second factor step. Stub until its factor lands. */
export function SecondFactor({ view }: { view: View; error?: string }) {
  return <p className="text-sm text-slate-600">This step ({view.step.kind}) is not available yet.</p>;
}
