"use client";

import { useConsoleForm } from "@/components/ui/form";
import { ShownOnce } from "@/components/ui/shown-once";

/**
 * A setup link the action just made, shown once: it lives only in this page's memory and cannot be
 * read back later (only its hash is stored).
 */
export function SetupLinkReveal() {
  const { state } = useConsoleForm();
  if (state.status !== "ok") return null;
  const r = state.result as { url?: unknown; email?: unknown; emailed?: unknown } | undefined;
  if (typeof r?.url !== "string") return null;
  return (
    <ShownOnce title="Copy this link now: it is shown once and cannot be read back." value={r.url} copyLabel="Copy link" testId="new-setup-link">
      <p className="mt-2 text-xs">
        {r.emailed === true ? `It was also sent to ${String(r.email)}. ` : ""}Whoever opens it must enter a code sent to {String(r.email)} before the portal opens; it works once.
      </p>
    </ShownOnce>
  );
}
