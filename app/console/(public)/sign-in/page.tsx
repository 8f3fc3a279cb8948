import type { Metadata } from "next";
import { buttonClass } from "@/components/ui/button";
import { AutoNavigate } from "@/components/console/auto-navigate";
import { ConsoleCard } from "@/components/console/console-card";
import { safeReturnTo } from "@/lib/console/login";
import { operatorExists } from "@/lib/console/setup";
import { getService } from "@/lib/service";

export const metadata: Metadata = { title: "Sign in" };

/**
 * Where the console sends a browser without a live console session. It hands over to
 * /console/auth/start with a full navigation (also from client-side navigations and server
 * actions, whose redirects Next follows as React payload requests).
 */
export default async function ConsoleSignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const query = await searchParams;
  const next = safeReturnTo(typeof query.next === "string" ? query.next : null);
  const href = `/console/auth/start?next=${encodeURIComponent(next)}`;
  // Before the first operator exists there is no one to sign in: say where the setup link is.
  if (!(await operatorExists((await getService()).db))) {
    return (
      <ConsoleCard title="Set up the console">
        <p className="text-sm text-slate-700">No operator exists yet. The first one is created from a one-time setup link that the server prints in its log when it starts:</p>
        <pre className="mt-3 overflow-x-auto rounded-md bg-slate-100 px-3 py-2 text-xs text-slate-800">
          {"  Console setup:   http://…/console/setup?token=…\n                   (one-time link to create the first operator; expires …)"}
        </pre>
        <p className="mt-3 text-sm text-slate-700">
          Open that link in this browser. It is valid for one hour; a new one is printed at each start until the first operator exists, so restart the server for a new link. (A deployment that sets <code>CONSOLE_SETUP_TOKEN</code> uses that token instead.)
        </p>
      </ConsoleCard>
    );
  }
  return (
    <ConsoleCard title="Sign in to the console">
      <p className="text-sm text-slate-600">Operators sign in on Latchkey&apos;s own sign-in page.</p>
      {/* A plain link, not next/link: the sign-in leaves the React app. */}
      <a href={href} className={`${buttonClass("primary")} mt-5 w-full`}>
        Continue to sign in
      </a>
      <AutoNavigate href={href} />
    </ConsoleCard>
  );
}
