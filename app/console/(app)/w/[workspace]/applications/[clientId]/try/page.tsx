import type { Metadata } from "next";
import Link from "next/link";
import { cookies } from "next/headers";
import { notFound } from "next/navigation";
import { Card } from "@/components/ui/card";
import { Notice, PageHeader } from "@/components/ui/page-header";
import { TrySignInButton } from "@/components/console/try-sign-in";
import { getApplication } from "@/lib/console/applications";
import { roleAtLeast } from "@/lib/console/authz";
import { triedSignIn, TRY_COOKIE_PREFIX } from "@/lib/getting-started/try-sign-in";
import { getService } from "@/lib/service";
import { trySignInAction } from "../../../../../../_lib/actions";
import { pageAccess } from "../../../../../../_lib/session";

export const metadata: Metadata = { title: "Sign-in tried" };

/** Where a sign-in tried from the console ends: who signed in, and the claims the application's ID token would carry. */
export default async function TriedSignInPage({ params, searchParams }: { params: Promise<{ workspace: string; clientId: string }>; searchParams: Promise<{ tx?: string | string[] }> }) {
  const [{ workspace, clientId: rawClientId }, query] = await Promise.all([params, searchParams]);
  const clientId = decodeURIComponent(rawClientId);
  const txId = typeof query.tx === "string" ? query.tx : "";
  const access = await pageAccess(workspace, "viewer", `/console/w/${workspace}/applications/${rawClientId}/try?tx=${encodeURIComponent(txId)}`);
  const service = await getService();
  const app = await getApplication(service, access.workspace.id, clientId);
  if (!app) notFound();
  const binding = (await cookies()).get(`${TRY_COOKIE_PREFIX}${txId}`)?.value;
  const outcome = await triedSignIn(service, access.workspace, clientId, txId, binding);
  const base = `/console/w/${access.workspace.id}`;
  const appHref = `${base}/applications/${encodeURIComponent(clientId)}`;
  const again = <TrySignInButton action={trySignInAction.bind(null, access.workspace.id)} clientId={clientId} readOnly={!roleAtLeast(access.role, "admin")} label="Try again" />;
  return (
    <>
      <PageHeader
        crumbs={[
          { label: "Workspaces", href: "/console" },
          { label: access.workspace.name, href: base },
          { label: "Applications", href: `${base}/applications` },
          { label: app.name, href: appHref },
          { label: "Sign-in tried" },
        ]}
        title="Sign-in tried"
        description={`The hosted sign-in of ${app.name}, with its policy and branding. Nothing was issued or sent to the application.`}
      />
      {outcome ? (
        <div className="space-y-6">
          <Notice tone="success" title={`Signed in as ${outcome.email}`}>
            This browser now has a hosted session for that user in this workspace: signing in to the workspace&apos;s applications here skips the password until it ends.{" "}
            <Link prefetch={false} className="font-medium underline" href={`${base}/users/${outcome.userId}`}>
              See the user
            </Link>{" "}
            or{" "}
            <Link prefetch={false} className="font-medium underline" href={`${base}/audit?type=sign_in.succeeded`}>
              the sign-in in the audit log
            </Link>
            .
          </Notice>
          <Card id="claims" title="The ID token's claims" description={`What ${app.name} would receive for this sign-in with the scopes ${outcome.scope.join(" ")}, as of now. Unsigned: no token was issued.`}>
            <dl className="grid gap-x-4 gap-y-2 text-sm sm:grid-cols-[10rem_1fr]">
              {Object.entries(outcome.claims).map(([name, value]) => (
                <div key={name} className="contents">
                  <dt className="font-mono text-slate-600">{name}</dt>
                  <dd className="break-all font-mono text-slate-900">{JSON.stringify(value)}</dd>
                </div>
              ))}
            </dl>
          </Card>
          {again}
        </div>
      ) : (
        <div className="space-y-4">
          <Notice tone="warning" title="No outcome to show">
            The sign-in has not been completed in this browser, or it ended more than ten minutes ago. Only the browser that started it sees its outcome.
          </Notice>
          {again}
        </div>
      )}
    </>
  );
}
