import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm } from "@/components/ui/form";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { Time } from "@/components/ui/time";
import { FACTOR_KIND_LABELS, type EnrolledFactor } from "@/lib/console/factors";
import type { UserRow } from "@/lib/console/users";
import { countOf } from "@/lib/i18n/plural";
import { RECOVERY_CODE_EVIDENCE } from "@/lib/authn/factors/recovery-codes/evidence";
import { actionFor } from "../../../../../_lib/action-for";

/** The factors the user enrolled (a cloned-looking one flagged), each removable. */
export function FactorsCard({ user, factors, now, ws, readOnly }: { user: UserRow; factors: EnrolledFactor[]; now: Date; ws: string; readOnly: boolean }) {
  return (
    <Card
      id="factors"
      title="Sign-in factors"
      description="Passkeys, security keys, authenticator apps and recovery codes the user enrolled. Remove a lost one to let the user sign in with what is left; where the policy requires MFA they enrol a new factor while signing in."
    >
      {factors.length === 0 ? (
        <EmptyState title="No factors enrolled">{user.hasPassword ? "The user signs in with a password or an email code." : "The user signs in with an email code."}</EmptyState>
      ) : (
        <Table caption="Sign-in factors" head={["Kind", "Name", "Created", "Last used", ""]}>
          {factors.map((f) => (
            <tr key={`${f.kind}-${f.id}`}>
              <Td>
                <span className="flex flex-wrap items-center gap-2">
                  {FACTOR_KIND_LABELS[f.kind]}
                  {f.flagged ? (
                    <Badge tone="red" title="Its signature counter went backwards: it may have been cloned. It is refused at sign-in.">
                      flagged
                    </Badge>
                  ) : null}
                </span>
              </Td>
              <Td>
                {f.name}
                {f.remaining !== undefined ? <div className="text-xs text-slate-500">{countOf(f.remaining, "code", "codes")} left</div> : null}
              </Td>
              <Td>
                <Time value={f.createdAt} />
              </Td>
              <Td>
                <Time value={f.lastUsedAt} now={now} relativeOnly />
              </Td>
              <Td>
                <ActionForm action={actionFor("removeUserFactor", ws)} hidden={{ user_id: user.id, kind: f.kind, factor_id: f.id }} readOnly={readOnly} className="" label={`Remove ${FACTOR_KIND_LABELS[f.kind]} ${f.name}`}>
                  <ConfirmButton
                    title={f.kind === RECOVERY_CODE_EVIDENCE.method ? "Remove all recovery codes?" : `Remove ${f.name}?`}
                    message="The user can no longer sign in with it. Do this only after confirming who is asking; their sessions stay live (end them below if the factor was stolen)."
                    confirmLabel="Remove"
                  >
                    Remove
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
