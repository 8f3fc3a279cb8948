"use client";

import type { ReactNode } from "react";
import { CopyButton } from "@/components/ui/copy-button";
import { useConsoleForm } from "@/components/ui/form";
import { formatUtc } from "@/components/ui/time";

interface Revealed {
  secret: string;
  expiresAt: Date | string;
}

function pick(result: unknown): Revealed | null {
  if (!result || typeof result !== "object") return null;
  const r = result as { secret?: unknown; expiresAt?: unknown };
  if (typeof r.secret === "string" && r.expiresAt) return { secret: r.secret, expiresAt: r.expiresAt as Date };
  if (r.secret && typeof r.secret === "object") return pick(r.secret);
  return null;
}

/**
 * Shows a client secret the action just created, once: it lives only in this page's memory and
 * cannot be read back later.
 */
export function SecretReveal({ children }: { children?: ReactNode }) {
  const { state } = useConsoleForm();
  if (state.status !== "ok") return null;
  const revealed = pick(state.result);
  if (!revealed) return null;
  return (
    <div role="status" className="rounded-md border border-amber-300 bg-amber-50 p-4 text-sm text-amber-950">
      <p className="font-semibold">Copy this secret now: it is shown once and cannot be read back.</p>
      <div className="mt-2 flex flex-wrap items-center gap-2">
        <code data-testid="new-secret" className="min-w-0 flex-1 break-all rounded border border-amber-200 bg-white px-2 py-1.5 font-mono text-xs">
          {revealed.secret}
        </code>
        <CopyButton value={revealed.secret} label="Copy secret" />
      </div>
      <p className="mt-2 text-xs">Expires {formatUtc(revealed.expiresAt)}.</p>
      {children}
    </div>
  );
}
