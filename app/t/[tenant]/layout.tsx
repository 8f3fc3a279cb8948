import { headers } from "next/headers";
import { hostedThemeCss } from "@/lib/branding/css";
import { resolveBranding } from "@/lib/branding/rule";
import { loadBranding } from "@/lib/branding/store";
import { negotiateLocale } from "@/lib/i18n/locales";
import { translate } from "@/lib/i18n/translate";
import { getService } from "@/lib/service";
import { policyNonce } from "@/lib/http/security-headers";

/**
 * Every hosted page under a workspace's issuer: the workspace's branding (display name, logo,
 * primary colour, light or dark theme, lib/branding) around the page. The theme is CSS only:
 * the wrapper remaps Tailwind's palette variables, so the pages' components stay as they are.
 * The line under the page is in the browser's language (lib/i18n).
 */
export default async function HostedLayout({ children, params }: { children: React.ReactNode; params: Promise<{ tenant: string }> }) {
  const { tenant } = await params;
  const [branding, requestHeaders] = await Promise.all([getService().then((service) => loadBranding(service.db, tenant)), headers()]);
  // An unknown workspace gets Latchkey's look and no name (the page itself says it does not exist).
  const look = branding ?? resolveBranding({}, "");
  return (
    <div className="lk-hosted flex min-h-screen flex-col bg-slate-50 text-slate-900" data-theme={look.theme}>
      <style nonce={policyNonce(requestHeaders.get("content-security-policy"))} dangerouslySetInnerHTML={{ __html: hostedThemeCss(look.palette) }} />
      {branding ? (
        <header className="flex items-center justify-center gap-3 px-4 pt-10">
          {/* The name beside it says the same, so the logo is decorative; served as is from its own address (no image optimiser). */}
          {/* eslint-disable-next-line @next/next/no-img-element */}
          {branding.logoUrl ? <img src={branding.logoUrl} alt="" className="h-10 w-auto max-w-[10rem] object-contain" data-testid="workspace-logo" /> : null}
          <p className="text-base font-semibold text-slate-900" data-testid="workspace-display-name">
            {branding.displayName}
          </p>
        </header>
      ) : null}
      {children}
      <p className="pb-8 text-center text-xs text-slate-500">{translate(negotiateLocale(requestHeaders.get("accept-language")), "hosted.footer")}</p>
    </div>
  );
}
