import type { Metadata } from "next";
import Link from "next/link";
import { ActionForm, Field, SubmitButton } from "@/components/ui/form";
import { buttonClass } from "@/components/ui/button";
import { ConsoleCard } from "@/components/console/console-card";
import { checkSetupToken } from "@/lib/console/setup";
import { OPERATOR_PASSWORD_MIN_LENGTH } from "@/lib/operators/accounts";
import { getService } from "@/lib/service";
import { setupAction } from "./actions";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Set up" };

export default async function SetupPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const query = await searchParams;
  const token = typeof query.token === "string" ? query.token : "";
  const state = await checkSetupToken(await getService(), token);
  if (state === "done") {
    return (
      <ConsoleCard title="Setup is complete">
        <p className="text-sm text-slate-600">An operator already exists, so this page no longer creates one.</p>
        <Link href="/console" prefetch={false} className={`${buttonClass("primary")} mt-5 w-full`}>
          Sign in to the console
        </Link>
      </ConsoleCard>
    );
  }
  if (state !== "valid") {
    return (
      <ConsoleCard title={state === "expired" ? "This setup link has expired" : "This setup link is not valid"}>
        <p className="text-sm text-slate-600">
          While no operator exists, Latchkey prints a one-time setup link each time it starts. Restart the server and open the link it prints; it is valid for one hour.
        </p>
      </ConsoleCard>
    );
  }
  return (
    <ConsoleCard title="Create the first operator" wide>
      <p className="mb-5 text-sm text-slate-600">
        Operators administer Latchkey in this console. The first one owns every workspace and can invite others. Creating it signs you in to the console; later you sign in with this email and password.
      </p>
      <ActionForm action={setupAction} hidden={{ token }} label="Create the first operator">
        <Field name="email" label="Email" type="email" autoComplete="username" />
        <Field name="name" label="Name" autoComplete="name" />
        <Field name="password" label="Password" type="password" autoComplete="new-password" hint={`At least ${OPERATOR_PASSWORD_MIN_LENGTH} characters.`} />
        <Field name="password_confirm" label="Repeat the password" type="password" autoComplete="new-password" />
        <SubmitButton>Create operator and sign in</SubmitButton>
      </ActionForm>
    </ConsoleCard>
  );
}
