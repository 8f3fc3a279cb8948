import type { ReactNode } from "react";
import type { PortalView } from "@/lib/account-security/portal-view";

/** A plain server-rendered POST form to a portal route (`path` under the issuer) with the portal's CSRF token. */
export function PortalForm({ view, path, children, className = "space-y-3" }: { view: PortalView; path: string; children: ReactNode; className?: string }) {
  return (
    <form method="post" action={`${view.basePath}${path}`} className={className}>
      <input type="hidden" name="csrf" value={view.csrf} />
      {children}
    </form>
  );
}
