import type { Metadata } from "next";
import { buttonClass } from "@/components/ui/button";
import { AutoNavigate } from "@/components/console/auto-navigate";
import { ConsoleCard } from "@/components/console/console-card";

export const metadata: Metadata = { title: "Signing in" };

const START = "/console/auth/start?next=%2Fconsole";

/**
 * Where setup sends the new operator: on to the console's sign-in start, which finds the hosted
 * session setup opened in this browser and comes back signed in (a full navigation: it leaves the
 * React app). In a browser without that session it is the ordinary sign-in.
 */
export default function SetupContinuePage() {
  return (
    <ConsoleCard title="Operator created">
      <p className="text-sm text-slate-600">You are being signed in to the console.</p>
      <a href={START} className={`${buttonClass("primary")} mt-5 w-full`}>
        Continue to the console
      </a>
      <AutoNavigate href={START} />
    </ConsoleCard>
  );
}
