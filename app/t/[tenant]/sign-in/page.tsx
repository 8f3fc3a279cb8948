import type { Metadata } from "next";
import { headers } from "next/headers";
import { notFound } from "next/navigation";
import { signInView } from "@/lib/sign-in/hosted-sign-in";
import { contextFor, resolveWorkspace } from "@/lib/server/router";
import { getService } from "@/lib/service";
import { HostedCard } from "@/components/hosted/hosted-card";
import { SignInForm } from "@/components/hosted/sign-in-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in", robots: { index: false } };

const ERRORS: Record<string, string> = {
  invalid_credentials: "The email or password is incorrect.",
  rate_limited: "Too many attempts. Wait a moment and try again.",
};

export default async function SignInPage(props: { params: Promise<{ tenant: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const [{ tenant }, query] = await Promise.all([props.params, props.searchParams]);
  const service = await getService();
  const workspace = await resolveWorkspace(service, tenant);
  if (!workspace) notFound();
  const tx = typeof query.tx === "string" ? query.tx : "";
  const view = await signInView(contextFor(service, workspace), tx, (await headers()).get("cookie"));
  if (view.kind === "expired") {
    return (
      <HostedCard title="This sign-in link has expired" workspaceName={workspace.name}>
        <p className="text-sm text-slate-600">
          Sign-in requests are valid for 10 minutes and can be used once. Go back to the application and start signing in again.
        </p>
      </HostedCard>
    );
  }
  const error = typeof query.error === "string" ? ERRORS[query.error] : undefined;
  return (
    <HostedCard title={`Sign in to ${view.applicationName}`} workspaceName={view.workspaceName}>
      <SignInForm action={`/t/${workspace.id}/sign-in/password`} tx={view.txId} csrf={view.csrf} error={error} />
    </HostedCard>
  );
}
