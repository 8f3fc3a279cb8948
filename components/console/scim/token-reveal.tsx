"use client";

import { CopyButton } from "@/components/ui/copy-button";
import { useConsoleForm } from "@/components/ui/form";

/**
 * A SCIM token the action just issued, shown once: it lives only in this page's memory and cannot
 * be read back later (only its hash is stored).
 */
export function ScimTokenReveal() {
  const { state } = useConsoleForm();
  if (state.status !== "ok") return null;
  const token = (state.result as { token?: unknown } | undefined)?.token;
  if (typeof token !== "string") return null;
  return (
    <div role="status" className="rounded-md border border-amber-300 bg-amber-50 p-4 text-sm text-amber-950">
      <p className="font-semibold">Copy this token now: it is shown once and cannot be read back.</p>
      <div className="mt-2 flex flex-wrap items-center gap-2">
        <code data-testid="new-scim-token" className="min-w-0 flex-1 break-all rounded border border-amber-200 bg-white px-2 py-1.5 font-mono text-xs">
          {token}
        </code>
        <CopyButton value={token} label="Copy token" />
      </div>
      <p className="mt-2 text-xs">Paste it into your identity provider as the SCIM bearer token (secret token).</p>
    </div>
  );
}
