import type { Metadata } from "next";
import { headers } from "next/headers";
import { connection } from "next/server";
import { isLocale, LOCALE_HEADER } from "@/lib/i18n/locales";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Latchkey", template: "%s · Latchkey" },
  description: "Hosted sign-in, account security and OAuth 2.0 / OpenID Connect for your applications.",
  referrer: "no-referrer",
};

export default async function RootLayout({ children }: { children: React.ReactNode }) {
  // Every page is rendered per request: Next puts the response's CSP nonce (proxy.ts) on its
  // scripts only while rendering, so a page built ahead of time would have its scripts refused.
  await connection();
  // A hosted page's language (proxy.ts negotiates it for /t/ paths); everything else is English.
  const requested = (await headers()).get(LOCALE_HEADER);
  return (
    <html lang={isLocale(requested) ? requested : "en"}>
      <body className="min-h-screen bg-slate-50 font-sans text-slate-900 antialiased">{children}</body>
    </html>
  );
}
