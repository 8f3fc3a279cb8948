import type { Metadata } from "next";
import { cookies } from "next/headers";
import { ActionForm, Field, SubmitButton } from "@/components/ui/form";
import { buttonClass } from "@/components/ui/button";
import { ConsoleCard } from "@/components/console/console-card";
import { formatUtc } from "@/components/ui/time";
import { InvitationError, viewInvitation } from "@/lib/operators/invitations";
import { OPERATOR_PASSWORD_MIN_LENGTH } from "@/lib/operators/accounts";
import { getService } from "@/lib/service";
import { layoutOperator } from "../../_lib/session";
import { acceptAsOperatorAction, acceptWithNewAccountAction, acceptWithProofAction, sendCodeAction, verifyCodeAction } from "./actions";
import { INVITATION_COOKIE, INVITATION_PROOF_COOKIE } from "./cookie";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Invitation" };

/**
 * An operator invitation (lib/operators/invitations.ts): the workspace and role it offers, and a
 * code sent to the invited address. Until that code is entered here, the page is the same whether
 * or not an operator account has the address; then it offers to create the account (own name,
 * own password or none) or to accept with the existing one. An operator signed in to the console
 * as the invited address accepts at once. Nothing about the account's other workspaces is shown.
 */
export default async function InvitationPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const query = await searchParams;
  const jar = await cookies();
  const token = (typeof query.token === "string" ? query.token : null) ?? jar.get(INVITATION_COOKIE)?.value ?? "";
  const [view, operator] = await Promise.all([viewInvitation(await getService(), token, jar.get(INVITATION_PROOF_COOKIE)?.value), layoutOperator()]);
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
  if (view.proof?.account === "existing") {
    return (
      <ConsoleCard title="Accept the invitation" wide>
        {offer}
        <p className="mb-5 text-sm text-slate-600">
          An operator account has {view.email}. Accept with it: you are signed in to the console. If the account has a password you did not set yourself, it is removed, every other session of the account
          ends, and you choose your own.
        </p>
        <ActionForm action={acceptWithProofAction} hidden={{ token }} label="Accept the invitation">
          <SubmitButton>Accept and open the workspace</SubmitButton>
        </ActionForm>
      </ConsoleCard>
    );
  }
  if (view.proof?.account === "new") {
    return (
      <ConsoleCard title="Create your operator account" wide>
        {offer}
        <p className="mb-5 text-sm text-slate-600">
          Choose your name, and a password if you want one. Later you sign in to the console with {view.email} and this password, or with a code sent to the address.
        </p>
        <ActionForm action={acceptWithNewAccountAction} hidden={{ token }} label="Create your operator account">
          <Field name="name" label="Name" autoComplete="name" />
          <Field name="password" label="Password" type="password" autoComplete="new-password" optional hint={`At least ${OPERATOR_PASSWORD_MIN_LENGTH} characters. Leave empty to sign in with email codes only.`} />
          <Field name="password_confirm" label="Repeat the password" type="password" autoComplete="new-password" optional />
          <SubmitButton>Create account and accept</SubmitButton>
        </ActionForm>
      </ConsoleCard>
    );
  }
  return (
    <ConsoleCard title="Confirm your email address" wide>
      {offer}
      <p className="mb-5 text-sm text-slate-600">To accept, confirm that {view.email} is yours: we send a one-time code to that address, and you enter it here.</p>
      <ActionForm action={sendCodeAction} hidden={{ token }} label="Send a code" successMessage="A code is on its way to the invited address. Enter it below.">
        <SubmitButton variant="secondary">Email me a code</SubmitButton>
      </ActionForm>
      <div className="mt-5">
        <ActionForm action={verifyCodeAction} hidden={{ token }} label="Enter the code">
          <Field name="code" label="Code" autoComplete="one-time-code" />
          <SubmitButton>Confirm</SubmitButton>
        </ActionForm>
      </div>
    </ConsoleCard>
  );
}
