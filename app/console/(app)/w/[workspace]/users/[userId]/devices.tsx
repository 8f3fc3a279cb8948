import { UserDevice } from "@/components/console/user-device";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm } from "@/components/ui/form";
import { EmptyState } from "@/components/ui/table";
import type { SessionInfo } from "@/lib/console/users";
import { actionFor } from "../../../../../_lib/action-for";

/** Where the user is signed in now: one device per live session, each of which can be ended. */
export function DevicesCard({ userId, sessions, now, ws, readOnly }: { userId: string; sessions: SessionInfo[]; now: Date; ws: string; readOnly: boolean }) {
  const liveSessions = sessions.filter((s) => s.live);
  return (
    <Card id="devices" title="Devices" description="Where the user is signed in now: the browser and system of each live session, from its user agent.">
      {liveSessions.length === 0 ? (
        <EmptyState title="Not signed in anywhere" />
      ) : (
        <ul className="divide-y divide-slate-100">
          {liveSessions.map((s) => (
            <li key={s.id} className="flex flex-wrap items-center justify-between gap-3 py-2" data-testid="user-device">
              <UserDevice userAgent={s.userAgent} ip={s.ip} lastSeenAt={s.lastSeenAt} signedInAt={s.createdAt} now={now} />
              <ActionForm action={actionFor("endUserSession", ws)} hidden={{ user_id: userId, session_id: s.id }} readOnly={readOnly} className="" label="End session">
                <ConfirmButton title="End this session?" message="The user is signed out on this device, and applications that rely on it lose access at their next check." confirmLabel="End session">
                  End session
                </ConfirmButton>
              </ActionForm>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}
