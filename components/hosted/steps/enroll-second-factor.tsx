import type { SignInView } from "@/lib/sign-in/view";

type View = Extract<SignInView, { kind: "step" }>;

/** The enroll second factor step. Stub until its factor lands. */
export function EnrollSecondFactor({ view }: { view: View; error?: string }) {
  return <p className="text-sm text-slate-600">This step ({view.step.kind}) is not available yet.</p>;
}
