import Link from "next/link";
import type { ReactNode } from "react";
import { Card } from "@/components/ui/card";
import type { GettingStarted, GettingStartedStep } from "@/lib/getting-started/checklist";

/**
 * A new workspace's checklist on its overview: each step ticked from what the workspace holds
 * (lib/getting-started/checklist.ts), with the link or action that does it. Shown until every step is done.
 */
export function GettingStartedCard({ state, base, tryButton }: { state: GettingStarted; base: string; tryButton: ReactNode }) {
  const app = state.application;
  const appHref = app ? `${base}/applications/${encodeURIComponent(app.clientId)}` : `${base}/applications/new`;
  const steps: { key: GettingStartedStep; title: string; body: ReactNode }[] = [
    {
      key: "application",
      title: "Create an application",
      body: app ? (
        <>
          <Link prefetch={false} className="font-medium text-indigo-700 underline" href={appHref}>
            {app.name}
          </Link>{" "}
          is registered.
        </>
      ) : (
        <>
          Register the web, single-page, native or machine-to-machine application that will sign users in.{" "}
          <Link prefetch={false} className="font-medium text-indigo-700 underline" href={`${base}/applications/new`}>
            Create an application
          </Link>
        </>
      ),
    },
    {
      key: "connected",
      title: "Copy its settings into your application",
      body: (
        <>
          The issuer, client id and secret, and a snippet for your library, are on the{" "}
          <Link prefetch={false} className="font-medium text-indigo-700 underline" href={app ? appHref : `${base}/applications/new`}>
            application&apos;s page
          </Link>
          . Ticked once your application has exchanged a code or used its client secret.
        </>
      ),
    },
    {
      key: "signed_in",
      title: "Sign in a test user",
      body: (
        <>
          <Link prefetch={false} className="font-medium text-indigo-700 underline" href={`${base}/users/new`}>
            Add a user
          </Link>
          , then sign in through your application, or try the sign-in here: the hosted page opens for {app?.signsUsersIn ? app.name : "the application"} and ends on a page that shows the ID token&apos;s
          claims.
          {app?.signsUsersIn ? <div className="mt-2">{tryButton}</div> : null}
        </>
      ),
    },
    {
      key: "audited",
      title: "See the sign-in in the audit log",
      body: (
        <>
          Every sign-in, failed or not, and every change made here is recorded.{" "}
          <Link prefetch={false} className="font-medium text-indigo-700 underline" href={`${base}/audit?type=sign_in.succeeded`}>
            Open the audit log
          </Link>
        </>
      ),
    },
  ];
  const done = steps.filter((s) => state.steps[s.key]).length;
  return (
    <Card id="getting-started" title="Get started" description={`${done} of ${steps.length} steps done. This list goes away once every step is.`}>
      <ol className="space-y-4">
        {steps.map((step, i) => {
          const ticked = state.steps[step.key];
          return (
            <li key={step.key} className="flex gap-3" data-step={step.key} data-done={ticked ? "true" : "false"}>
              <span
                aria-hidden="true"
                className={`mt-0.5 flex h-6 w-6 shrink-0 items-center justify-center rounded-full text-xs font-semibold ${ticked ? "bg-emerald-600 text-white" : "border border-slate-300 text-slate-600"}`}
              >
                {ticked ? "✓" : i + 1}
              </span>
              <div className="min-w-0 text-sm">
                <p className="font-medium text-slate-900">
                  {step.title}
                  <span className="sr-only">{ticked ? " (done)" : " (to do)"}</span>
                </p>
                <div className="mt-0.5 text-slate-600">{step.body}</div>
              </div>
            </li>
          );
        })}
      </ol>
    </Card>
  );
}
