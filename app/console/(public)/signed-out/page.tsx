import type { Metadata } from "next";
import Link from "next/link";
import { buttonClass } from "@/components/ui/button";
import { ConsoleCard } from "@/components/console/console-card";

export const metadata: Metadata = { title: "Signed out" };

export default function SignedOutPage() {
  return (
    <ConsoleCard title="You are signed out">
      <p className="text-sm text-slate-600">Your console session and your sign-in on this device have ended.</p>
      <Link href="/console" prefetch={false} className={`${buttonClass("primary")} mt-5 w-full`}>
        Sign in again
      </Link>
    </ConsoleCard>
  );
}
