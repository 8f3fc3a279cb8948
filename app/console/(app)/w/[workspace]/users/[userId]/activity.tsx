import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm } from "@/components/ui/form";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { Time } from "@/components/ui/time";
import type { GrantInfo, SessionInfo } from "@/lib/console/users";
import { parseUserAgent } from "@/lib/user-agent";
import { actionFor } from "../../../../../_lib/action-for";

interface ActivityProps {
  userId: string;
  now: Date;
  ws: string;
  readOnly: boolean;
}

/** The user's hosted sessions, live ones endable, ended ones with why. */
export function SessionsCard({ userId, sessions, now, ws, readOnly }: ActivityProps & { sessions: SessionInfo[] }) {
  return (
    <Card title="Hosted sessions" description="Browser sessions on the sign-in pages. Ending one ends every application sign-in made in it.">
      {sessions.length === 0 ? (
        <EmptyState title="No sessions" />
      ) : (
        <Table caption="Hosted sessions" head={["Device", "Signed in", "Last seen", "Methods", "From", ""]}>
          {sessions.map((s) => (
            <tr key={s.id}>
              <Td>
                {parseUserAgent(s.userAgent).label}
                <div className="font-mono text-xs text-slate-500">{s.id.slice(0, 8)}…</div>
              </Td>
              <Td>
                <Time value={s.createdAt} />
              </Td>
              <Td>
                <Time value={s.lastSeenAt} now={now} relativeOnly />
              </Td>
              <Td mono>{s.amr.join(" ")}</Td>
              <Td className="max-w-48 truncate text-xs text-slate-500">{s.ip ?? "—"}</Td>
              <Td>
                {s.live ? (
                  <ActionForm action={actionFor("endUserSession", ws)} hidden={{ user_id: userId, session_id: s.id }} readOnly={readOnly} className="" label="End session">
                    <ConfirmButton title="End this session?" message="The user is signed out of it, and applications that rely on it lose access at their next check." confirmLabel="End session">
                      End
                    </ConfirmButton>
                  </ActionForm>
                ) : (
                  <Badge>{s.endedAt ? `ended${s.endReason ? ` (${s.endReason})` : ""}` : "expired"}</Badge>
                )}
              </Td>
            </tr>
          ))}
        </Table>
      )}
    </Card>
  );
}

/** The user's grants (one per application sign-in), live ones revocable, ended ones with why. */
export function GrantsCard({ userId, grants, now, ws, readOnly }: ActivityProps & { grants: GrantInfo[] }) {
  return (
    <Card title="Grants" description="One per application sign-in: the refresh family behind the application's tokens.">
      {grants.length === 0 ? (
        <EmptyState title="No grants" />
      ) : (
        <Table caption="Grants" head={["Application", "Scope", "Created", "Last used", ""]}>
          {grants.map((g) => (
            <tr key={g.id}>
              <Td>
                {g.clientName}
                <div className="font-mono text-xs text-slate-500">{g.clientId}</div>
              </Td>
              <Td mono className="max-w-64 break-words">
                {g.scope.join(" ")}
              </Td>
              <Td>
                <Time value={g.createdAt} />
              </Td>
              <Td>
                <Time value={g.lastUsedAt} now={now} relativeOnly />
              </Td>
              <Td>
                {g.live ? (
                  <ActionForm action={actionFor("revokeUserGrant", ws)} hidden={{ user_id: userId, grant_id: g.id }} readOnly={readOnly} className="" label="Revoke grant">
                    <ConfirmButton title="Revoke this grant?" message="Its refresh token and access tokens stop working now; the application must sign the user in again." confirmLabel="Revoke">
                      Revoke
                    </ConfirmButton>
                  </ActionForm>
                ) : (
                  <Badge>{g.revokedAt ? `revoked${g.revokeReason ? ` (${g.revokeReason})` : ""}` : "ended"}</Badge>
                )}
              </Td>
            </tr>
          ))}
        </Table>
      )}
    </Card>
  );
}
