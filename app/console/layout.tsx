import type { Metadata } from "next";
import { CONSOLE_REFERRER_POLICY } from "@/lib/http/security-headers";

export const metadata: Metadata = {
  title: { default: "Console", template: "%s · Latchkey console" },
  robots: { index: false, follow: false },
  // As the console's Referrer-Policy header (next.config.ts); the root layout's meta says no-referrer.
  referrer: CONSOLE_REFERRER_POLICY,
};

export default function ConsoleRootLayout({ children }: { children: React.ReactNode }) {
  return <div className="min-h-screen bg-slate-50">{children}</div>;
}
