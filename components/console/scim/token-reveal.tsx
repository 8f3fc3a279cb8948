"use client";

import { useConsoleForm } from "@/components/ui/form";
import { ShownOnce } from "@/components/ui/shown-once";

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
    <ShownOnce title="Copy this token now: it is shown once and cannot be read back." value={token} copyLabel="Copy token" testId="new-scim-token">
      <p className="mt-2 text-xs">Paste it into your identity provider as the SCIM bearer token (secret token).</p>
    </ShownOnce>
  );
}
