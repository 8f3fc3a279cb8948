import type { SignInView } from "@/lib/sign-in/view";

type View = Extract<SignInView, { kind: "step" }>;

/** "Email me a code" on the first step. Stub until the email factor lands. */
export function EmailCodeRequest(_props: { view: View; emailFieldId: string | null }) {
  return null;
}
