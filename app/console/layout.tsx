import type { Metadata } from "next";

export const metadata: Metadata = {
  title: { default: "Console", template: "%s · Latchkey console" },
  robots: { index: false, follow: false },
};

export default function ConsoleRootLayout({ children }: { children: React.ReactNode }) {
  return <div className="min-h-screen bg-slate-50">{children}</div>;
}
