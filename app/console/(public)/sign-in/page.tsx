import type { Metadata } from "next";
import { buttonClass } from "@/components/ui/button";
import { AutoNavigate } from "@/components/console/auto-navigate";
import { ConsoleCard } from "@/components/console/console-card";
import { safeReturnTo } from "@/lib/console/login";

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
