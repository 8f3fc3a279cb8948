import type { ReactNode } from "react";
import { CopyButton } from "@/components/ui/copy-button";

/**
 * A secret, token or link shown this once (only its hash is stored, so it cannot be read back): the
 * value with a copy button, the warning above it and the caller's note below. One look for every
 * surface that hands out a credential: the console's client secrets, SCIM tokens and setup links.
 */
export function ShownOnce({ title, value, copyLabel, testId, compact = false, children }: { title: string; value: string; copyLabel: string; testId: string; compact?: boolean; children?: ReactNode }) {
  return (
    <div role="status" className={`rounded-md border border-amber-300 bg-amber-50 ${compact ? "p-3" : "p-4"} text-sm text-amber-950`}>
      <p className="font-semibold">{title}</p>
      <div className="mt-2 flex flex-wrap items-center gap-2">
        <code data-testid={testId} className="min-w-0 flex-1 break-all rounded border border-amber-200 bg-white px-2 py-1.5 font-mono text-xs">
          {value}
        </code>
        <CopyButton value={value} label={copyLabel} />
      </div>
      {children}
    </div>
  );
}
