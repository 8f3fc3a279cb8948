import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm } from "@/components/ui/form";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { Time } from "@/components/ui/time";
import type { LinkedIdentity } from "@/lib/console/identities";
import { actionFor } from "../../../../../_lib/action-for";

/** The upstream identities (enterprise connections, social providers) that sign in to this user, each unlinkable. */
export function IdentitiesCard({ userId, identities, now, ws, readOnly }: { userId: string; identities: LinkedIdentity[]; now: Date; ws: string; readOnly: boolean }) {
  return (
    <Card
      id="identities"
      title="Linked sign-ins"
      description="Enterprise connections and social providers this user signs in with, by the provider's issuer and subject. Unlinking stops that sign-in from reaching this account; sessions already open stay (end them below)."
    >
      {identities.length === 0 ? (
        <EmptyState title="No linked sign-ins">The user signs in with this service&apos;s own methods only.</EmptyState>
      ) : (
        <Table caption="Linked sign-ins" head={["Through", "Upstream identity", "Email (as the provider said)", "Linked", "Last sign-in", ""]}>
          {identities.map((i) => (
            <tr key={i.id}>
              <Td>
                {i.sourceName ?? <span className="text-slate-600">removed provider</span>}
                <div className="text-xs text-slate-600">{i.kind === "connection" ? "Enterprise connection" : i.kind === "social" ? "Social provider" : ""}</div>
              </Td>
              <Td>
                <div className="break-all font-mono text-xs">{i.issuer}</div>
                <div className="break-all font-mono text-xs text-slate-600">{i.subject}</div>
              </Td>
              <Td>
                {i.email ?? "—"} {i.email ? i.emailVerified ? <Badge tone="green">verified</Badge> : <Badge>unverified</Badge> : null}
              </Td>
              <Td>
                <Time value={i.createdAt} />
              </Td>
              <Td>
                <Time value={i.lastSignInAt} now={now} relativeOnly />
              </Td>
              <Td>
                <ActionForm action={actionFor("unlinkUserIdentity", ws)} hidden={{ user_id: userId, identity_id: i.id }} readOnly={readOnly} className="" label={`Unlink ${i.sourceName ?? i.issuer}`}>
                  <ConfirmButton title="Unlink this sign-in?" message="Signing in through it will no longer reach this account. Open sessions stay live; end them below if needed." confirmLabel="Unlink">
                    Unlink
                  </ConfirmButton>
                </ActionForm>
              </Td>
            </tr>
          ))}
        </Table>
      )}
    </Card>
  );
}
