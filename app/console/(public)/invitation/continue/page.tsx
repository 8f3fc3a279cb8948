import type { Metadata } from "next";
import { buttonClass } from "@/components/ui/button";
import { AutoNavigate } from "@/components/console/auto-navigate";
import { ConsoleCard } from "@/components/console/console-card";
import { safeReturnTo } from "@/lib/console/login";
import { ACCOUNT_PAGE_AFTER_PROOF } from "@/lib/console/operator-accounts";

export const metadata: Metadata = { title: "Signing in" };

/**
 * Where accepting an invitation leads: on to the console's sign-in start, which finds the hosted
 * session opened in this browser and comes back signed in to the workspace, or to "Your account"
 * when a password the person did not set was discarded (they choose their own there).
 */
export default async function InvitationContinuePage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const query = await searchParams;
  const workspace = typeof query.workspace === "string" && /^[a-z0-9-]{1,63}$/.test(query.workspace) ? query.workspace : null;
  const next = query.account === "1" ? ACCOUNT_PAGE_AFTER_PROOF : workspace ? `/console/w/${workspace}` : "/console";
  const start = `/console/auth/start?next=${encodeURIComponent(safeReturnTo(next))}`;
  return (
    <ConsoleCard title="Invitation accepted">
      <p className="text-sm text-slate-600">Your operator account is ready. You are being signed in to the console.</p>
      <a href={start} className={`${buttonClass("primary")} mt-5 w-full`}>
        Continue to the console
      </a>
      <AutoNavigate href={start} />
    </ConsoleCard>
  );
}
