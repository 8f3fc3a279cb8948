import type { Metadata } from "next";
import { cookies } from "next/headers";
import { ActionForm, Field, SubmitButton } from "@/components/ui/form";
import { buttonClass } from "@/components/ui/button";
import { ConsoleCard } from "@/components/console/console-card";
import { formatUtc } from "@/components/ui/time";
import { InvitationError, viewInvitation } from "@/lib/console/invitations";
import { OPERATOR_PASSWORD_MIN_LENGTH } from "@/lib/console/setup";
import { getService } from "@/lib/service";
import { layoutOperator } from "../../_lib/session";
import { acceptAsOperatorAction, acceptWithNewAccountAction, signInToAcceptAction } from "./actions";
import { INVITATION_COOKIE } from "./cookie";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Invitation" };

/**
 * An operator invitation (lib/console/invitations.ts): the workspace and role it offers; then
 * create the operator account with your own password, or (when the account exists) sign in as
 * the invited operator and accept. Nothing about the account's other workspaces is shown.
 */
export default async function InvitationPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const query = await searchParams;
  const token = (typeof query.token === "string" ? query.token : null) ?? (await cookies()).get(INVITATION_COOKIE)?.value ?? "";
  const [view, operator] = await Promise.all([viewInvitation(await getService(), token), layoutOperator()]);
  if (view instanceof InvitationError) {
    return (
      <ConsoleCard title="This invitation cannot be used">
        <p className="text-sm text-slate-600">{view.message}</p>
      </ConsoleCard>
    );
  }
  const offer = (
    <p className="mb-5 text-sm text-slate-600">
      You are invited to administer the workspace <strong className="text-slate-900">{view.workspaceName}</strong> as <strong className="text-slate-900">{view.role}</strong>. The invitation is for{" "}
      <strong className="text-slate-900">{view.email}</strong> and is valid until {formatUtc(view.expiresAt)}.
    </p>
  );
  if (operator && operator.email.toLowerCase() !== view.email.toLowerCase()) {
    return (
      <ConsoleCard title="Signed in as another operator" wide>
        {offer}
        <p role="alert" className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800">
          You are signed in as {operator.email}. Only {view.email} can accept this invitation: sign out, then open the link again.
        </p>
        <form method="post" action="/console/auth/sign-out" className="mt-5">
          <button type="submit" className={`${buttonClass("secondary")} w-full`}>
            Sign out
          </button>
        </form>
      </ConsoleCard>
    );
  }
  if (operator) {
    return (
      <ConsoleCard title="Accept the invitation" wide>
        {offer}
        <ActionForm action={acceptAsOperatorAction} hidden={{ token }} label="Accept the invitation">
          <SubmitButton>Accept and open the workspace</SubmitButton>
        </ActionForm>
      </ConsoleCard>
    );
  }
  if (view.accountExists) {
    return (
      <ConsoleCard title="Sign in to accept" wide>
        {offer}
        <p className="mb-5 text-sm text-slate-600">An operator account with this email exists. Sign in to the console with it, and you come back here to accept.</p>
        <ActionForm action={signInToAcceptAction} hidden={{ token }} label="Sign in to accept">
          <SubmitButton>Sign in as {view.email}</SubmitButton>
        </ActionForm>
      </ConsoleCard>
    );
  }
  return (
    <ConsoleCard title="Create your operator account" wide>
      {offer}
      <p className="mb-5 text-sm text-slate-600">Choose your name and password. Later you sign in to the console with {view.email} and this password.</p>
      <ActionForm action={acceptWithNewAccountAction} hidden={{ token }} label="Create your operator account">
        <Field name="name" label="Name" autoComplete="name" />
        <Field name="password" label="Password" type="password" autoComplete="new-password" hint={`At least ${OPERATOR_PASSWORD_MIN_LENGTH} characters.`} />
        <Field name="password_confirm" label="Repeat the password" type="password" autoComplete="new-password" />
        <SubmitButton>Create account and accept</SubmitButton>
      </ActionForm>
    </ConsoleCard>
  );
}
