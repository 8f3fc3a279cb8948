"use client";

import { CopyButton } from "@/components/ui/copy-button";
import { useConsoleForm } from "@/components/ui/form";

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
    <div role="status" className="rounded-md border border-amber-300 bg-amber-50 p-4 text-sm text-amber-950">
      <p className="font-semibold">Copy this link now: it is shown once and cannot be read back.</p>
      <div className="mt-2 flex flex-wrap items-center gap-2">
        <code data-testid="new-setup-link" className="min-w-0 flex-1 break-all rounded border border-amber-200 bg-white px-2 py-1.5 font-mono text-xs">
          {r.url}
        </code>
        <CopyButton value={r.url} label="Copy link" />
      </div>
      <p className="mt-2 text-xs">
        {r.emailed === true ? `It was also sent to ${String(r.email)}. ` : ""}Whoever opens it must enter a code sent to {String(r.email)} before the portal opens; it works once.
      </p>
    </div>
  );
}
