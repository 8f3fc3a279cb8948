"use client";

import { useEffect, useState } from "react";
import { useRouter } from "next/navigation";
import { useConsoleForm } from "@/components/ui/form";
import { ShownOnce } from "@/components/ui/shown-once";
import { formatUtc } from "@/components/ui/time";

interface Created {
  clientId: string;
  secret: string;
  expiresAt: string;
}

// The secret of an application created a moment ago, held in this tab's memory only between the
// new-application form and the application's page, and dropped once that page has shown it: a
// reload, another tab or the browser's history never shows it again (only its hash is stored).
let pending: Created | null = null;

/**
 * Inside the new-application form: once the action returns a secret, carry it (in memory) to the
 * application's page. Without JavaScript the form's own SecretReveal shows it instead.
 */
export function GoToCreatedApplication({ base }: { base: string }) {
  const { state } = useConsoleForm();
  const router = useRouter();
  useEffect(() => {
    if (state.status !== "ok") return;
    const r = state.result as { clientId?: unknown; secret?: { secret?: unknown; expiresAt?: unknown } | null } | undefined;
    if (!r || typeof r.clientId !== "string" || !r.secret || typeof r.secret.secret !== "string") return;
    const expiresAt = r.secret.expiresAt instanceof Date ? r.secret.expiresAt.toISOString() : String(r.secret.expiresAt);
    pending = { clientId: r.clientId, secret: r.secret.secret, expiresAt };
    router.replace(`${base}/applications/${encodeURIComponent(r.clientId)}`);
  }, [state, router, base]);
  return null;
}

/** On the application's page: the secret just created, beside the client id, shown this once. */
export function CreatedSecret({ clientId }: { clientId: string }) {
  const [shown] = useState(() => (pending?.clientId === clientId ? pending : null));
  useEffect(() => {
    if (pending?.clientId === clientId) pending = null;
  }, [clientId]);
  if (!shown) return null;
  return (
    <ShownOnce title="Client secret: copy it now. It is shown once and cannot be read back." value={shown.secret} copyLabel="Copy secret" testId="new-secret" compact>
      <p className="mt-2 text-xs">Expires {formatUtc(shown.expiresAt)}. Leaving or reloading this page hides it for good; rotate the secret if it is lost.</p>
    </ShownOnce>
  );
}
