"use client";

import { CopyButton } from "@/components/ui/copy-button";
import { useConsoleForm } from "@/components/ui/form";
import { formatUtc } from "@/components/ui/time";

interface Invited {
  email: string;
  role: string;
  url: string;
  expiresAt: Date | string;
  emailed: boolean;
}

function pick(result: unknown): Invited | null {
  if (!result || typeof result !== "object") return null;
  const r = result as Partial<Invited>;
  return typeof r.url === "string" && typeof r.email === "string" && r.expiresAt ? (r as Invited) : null;
}

/**
 * Inside the invite form: the invitation the action just created, with its link shown this once
 * (only its hash is stored) for the inviter to hand to the invitee should the email not arrive.
 */
export function InvitationLink() {
  const { state } = useConsoleForm();
  if (state.status !== "ok") return null;
  const invited = pick(state.result);
  if (!invited) return null;
  return (
    <div role="status" className="rounded-md border border-amber-300 bg-amber-50 p-4 text-sm text-amber-950">
      <p className="font-semibold">
        {invited.emailed ? `Invitation sent to ${invited.email} (${invited.role}).` : `Invitation created for ${invited.email} (${invited.role}); this server cannot send email.`}
      </p>
      <p className="mt-1">
        {invited.emailed ? "If it does not arrive, give them this link yourself" : "Give them this link yourself"}, and to no one else: it is shown once. They choose their own password, or sign in with the operator account they already have.
      </p>
      <div className="mt-2 flex flex-wrap items-center gap-2">
        <code data-testid="invitation-link" className="min-w-0 flex-1 break-all rounded border border-amber-200 bg-white px-2 py-1.5 font-mono text-xs">
          {invited.url}
        </code>
        <CopyButton value={invited.url} label="Copy link" />
      </div>
      <p className="mt-2 text-xs">Valid once, until {formatUtc(invited.expiresAt)}.</p>
    </div>
  );
}
