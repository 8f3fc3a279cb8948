import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm, Field, SubmitButton } from "@/components/ui/form";
import { EmptyState, Table, Td } from "@/components/ui/table";
import { Time } from "@/components/ui/time";
import { SecretReveal } from "@/components/console/secret-reveal";
import type { ApplicationRow } from "@/lib/console/applications";
import { warnsOfExpiry } from "@/lib/console/secret-expiry";
import { MAX_ROTATION_OVERLAP_HOURS, type ClientSecretInfo } from "@/lib/clients/secrets";
import { actionFor } from "../../../../../_lib/action-for";

interface SecretsProps {
  app: ApplicationRow;
  secrets: ClientSecretInfo[];
  now: Date;
  ws: string;
  readOnly: boolean;
}

/** A confidential application's client secrets: the list (expire an overlap, revoke), rotating and adding one. */
export function SecretsCard({ app, secrets, now, ws, readOnly }: SecretsProps) {
  return (
    <Card id="secrets" title="Client secrets" description="At most two are active at a time. A secret is shown once when it is created; the list never shows it again.">
      <div className="space-y-5">
        {secrets.length === 0 ? (
          <EmptyState title="No secrets">Create one so the application can authenticate.</EmptyState>
        ) : (
          <SecretsTable clientId={app.clientId} secrets={secrets} now={now} ws={ws} readOnly={readOnly} />
        )}
        <div className="grid gap-6 md:grid-cols-2">
          <div className="rounded-md border border-slate-200 p-4">
            <h3 className="mb-3 text-sm font-semibold text-slate-900">Rotate</h3>
            <ActionForm action={actionFor("rotateSecret", ws)} hidden={{ client_id: app.clientId }} readOnly={readOnly} label="Rotate secret">
              <SecretReveal />
              <Field
                name="overlap_hours"
                label="Overlap (hours)"
                type="number"
                min={0}
                max={MAX_ROTATION_OVERLAP_HOURS}
                defaultValue={24}
                hint="0 replaces at once; up to 24 keeps the newest old secret valid that long while you deploy the new one."
              />
              <Field name="lifetime_days" label="Lifetime of the new secret (days)" type="number" min={1} max={365} defaultValue={app.secretLifetimeDays} />
              <SubmitButton>Rotate secret</SubmitButton>
            </ActionForm>
          </div>
          <div className="rounded-md border border-slate-200 p-4">
            <h3 className="mb-3 text-sm font-semibold text-slate-900">Add a secret</h3>
            <ActionForm action={actionFor("createSecret", ws)} hidden={{ client_id: app.clientId }} readOnly={readOnly} label="Create secret">
              <SecretReveal />
              <Field name="lifetime_days" label="Lifetime (days)" type="number" min={1} max={365} defaultValue={app.secretLifetimeDays} hint="1–365 days. Refused while two secrets are active." />
              <SubmitButton variant="secondary">Create secret</SubmitButton>
            </ActionForm>
          </div>
        </div>
      </div>
    </Card>
  );
}

/** One row per secret: its status (an active one that expires soon warns), dates, and for an active one its actions. */
function SecretsTable({ clientId, secrets, now, ws, readOnly }: Omit<SecretsProps, "app"> & { clientId: string }) {
  const activeSecrets = secrets.filter((s) => s.status === "active");
  const hidden = { client_id: clientId };
  return (
    <Table caption="Client secrets" head={["Secret", "Status", "Created", "Expires", "Last used", ""]}>
      {secrets.map((s) => {
        const soon = s.status === "active" && warnsOfExpiry(s, activeSecrets, now);
        return (
          <tr key={s.id}>
            <Td mono>{s.id.slice(0, 8)}…</Td>
            <Td>
              {s.status === "active" ? <Badge tone={soon ? "amber" : "green"}>{soon ? "expires soon" : "active"}</Badge> : <Badge tone={s.status === "revoked" ? "red" : "neutral"}>{s.status}</Badge>}
            </Td>
            <Td>
              <Time value={s.createdAt} />
            </Td>
            <Td>
              <Time value={s.revokedAt ?? s.expiresAt} now={now} />
            </Td>
            <Td>
              <Time value={s.lastUsedAt} />
            </Td>
            <Td>
              {s.status === "active" ? (
                <div className="flex flex-wrap gap-2">
                  {activeSecrets.length > 1 ? (
                    <ActionForm action={actionFor("expireSecretNow", ws)} hidden={{ ...hidden, secret_id: s.id }} readOnly={readOnly} className="" label="End overlap">
                      <ConfirmButton
                        title="Let this secret expire now?"
                        message="Use this when every deployment has the new secret. Requests with this one fail from now on; user sign-ins obtained with it stay valid."
                        confirmLabel="Expire now"
                        variant="secondary"
                      >
                        Expire now
                      </ConfirmButton>
                    </ActionForm>
                  ) : null}
                  <ActionForm action={actionFor("revokeSecret", ws)} hidden={{ ...hidden, secret_id: s.id }} readOnly={readOnly} className="" label="Revoke secret">
                    <ConfirmButton title="Revoke this secret?" message="It stops working immediately, and machine tokens obtained with it end too." confirmLabel="Revoke">
                      Revoke
                    </ConfirmButton>
                  </ActionForm>
                </div>
              ) : null}
            </Td>
          </tr>
        );
      })}
    </Table>
  );
}
