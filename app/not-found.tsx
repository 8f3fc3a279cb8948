import type { Metadata } from "next";
import Link from "next/link";
import { headers } from "next/headers";
import { HostedCard } from "@/components/hosted/hosted-card";
import { hostedThemeCss } from "@/lib/branding/css";
import { resolveBranding } from "@/lib/branding/rule";
import { policyNonce } from "@/lib/http/security-headers";
import { translate } from "@/lib/i18n/translate";

export const metadata: Metadata = { title: "Page not found" };

/**
 * Any address outside the console and the workspaces' issuers that names nothing: Latchkey's own
 * page in the hosted pages' look (Latchkey's default branding, light or dark as the browser
 * prefers), not Next's bare one. Unknown paths under an issuer are the route table's
 * (app/t/[tenant]/[...rest]); the console has its own (app/console/(app)/not-found.tsx).
 */
export default async function NotFound() {
  const look = resolveBranding({}, "");
  const nonce = policyNonce((await headers()).get("content-security-policy"));
  return (
    <div className="lk-hosted flex min-h-screen flex-col bg-slate-50 text-slate-900" data-theme={look.theme}>
      <style nonce={nonce} dangerouslySetInnerHTML={{ __html: hostedThemeCss(look.palette) }} />
      <HostedCard title="Page not found">
        <p className="text-sm text-slate-600">There is nothing at this address. Check the link, or go back to the application you came from and start again there.</p>
        <p className="mt-6 text-sm">
          <Link href="/" prefetch={false} className="font-medium text-indigo-700 underline hover:text-indigo-600">
            Go to the Latchkey home page
          </Link>
        </p>
        <p className="mt-4 text-xs text-slate-500">Error code: 404</p>
      </HostedCard>
      <p className="pb-8 text-center text-xs text-slate-500">{translate("en", "hosted.footer")}</p>
    </div>
  );
}
