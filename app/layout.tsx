import type { Metadata } from "next";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Latchkey", template: "%s · Latchkey" },
  description: "Hosted sign-in, account security and OAuth 2.0 / OpenID Connect for your applications.",
  referrer: "no-referrer",
};

export default function RootLayout({ children }: { children: React.ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen bg-slate-50 font-sans text-slate-900 antialiased">{children}</body>
    </html>
  );
}
