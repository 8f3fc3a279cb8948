"use client";

import type { ReactNode } from "react";
import { useConsoleForm } from "@/components/ui/form";
import { ShownOnce } from "@/components/ui/shown-once";
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
    <ShownOnce title="Copy this secret now: it is shown once and cannot be read back." value={revealed.secret} copyLabel="Copy secret" testId="new-secret">
      <p className="mt-2 text-xs">Expires {formatUtc(revealed.expiresAt)}.</p>
      {children}
    </ShownOnce>
  );
}
