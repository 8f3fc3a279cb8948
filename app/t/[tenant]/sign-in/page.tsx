import type { Metadata } from "next";
import { headers } from "next/headers";
import { notFound } from "next/navigation";
import { hostedErrorText, signInFormMessage } from "@/lib/hosted/errors";
import { signInView } from "@/lib/sign-in/hosted-sign-in";
import { contextFor, resolveWorkspace } from "@/lib/server/router";
import { getService } from "@/lib/service";
import { HostedCard } from "@/components/hosted/hosted-card";
import { SignInForm } from "@/components/hosted/sign-in-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in", robots: { index: false } };

export default async function SignInPage(props: { params: Promise<{ tenant: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const [{ tenant }, query] = await Promise.all([props.params, props.searchParams]);
  const service = await getService();
  const workspace = await resolveWorkspace(service, tenant);
  if (!workspace) notFound();
  const tx = typeof query.tx === "string" ? query.tx : "";
  const view = await signInView(contextFor(service, workspace), tx, (await headers()).get("cookie"));
  if (view.kind === "expired") {
    const expired = hostedErrorText("sign_in_link_expired");
    return (
      <HostedCard title={expired.title} workspaceName={workspace.name}>
        <p className="text-sm text-slate-600">{expired.message}</p>
      </HostedCard>
    );
  }
  // Only the codes the form shows (lib/hosted/errors.ts); any other value shows nothing.
  const error = signInFormMessage(query.error);
  return (
    <HostedCard title={`Sign in to ${view.applicationName}`} workspaceName={view.workspaceName}>
      <SignInForm action={`/t/${workspace.id}/sign-in/password`} tx={view.txId} csrf={view.csrf} error={error} />
    </HostedCard>
  );
}
