import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { ActionForm, Checkbox, CheckboxGroup, SubmitButton } from "@/components/ui/form";
import { EmptyState } from "@/components/ui/table";
import type { ApiGrantInfo, ApiInfo } from "@/lib/authz/model";
import type { ApplicationRow } from "@/lib/console/applications";
import { actionFor } from "../../../../../_lib/action-for";

/** The workspace's APIs, each with whether this application may use it and which of its permissions. */
export function ApiAccessCard({ app, apis, grants, ws, readOnly }: { app: ApplicationRow; apis: ApiInfo[]; grants: ApiGrantInfo[]; ws: string; readOnly: boolean }) {
  return (
    <Card
      id="api-grants"
      title="API access"
      description={
        app.type === "M2M"
          ? "The APIs this machine-to-machine application may call, and the permissions it may obtain with client credentials."
          : "The APIs this application may request for its users, and the permissions it may request (users still need a role that grants them)."
      }
    >
      {apis.length === 0 ? (
        <EmptyState title="No APIs in this workspace">Define an API under APIs first.</EmptyState>
      ) : (
        <div className="divide-y divide-slate-100">
          {apis.map((api) => {
            const grant = grants.find((g) => g.audience === api.audience);
            return (
              <div key={api.id} className="py-4 first:pt-0 last:pb-0">
                <ActionForm action={actionFor("setClientApiGrant", ws)} hidden={{ client_id: app.clientId, audience: api.audience }} readOnly={readOnly} successMessage="Saved." label={`Access to ${api.name}`}>
                  <div className="flex flex-wrap items-center gap-2">
                    <span className="font-medium">{api.name}</span>
                    <code className="font-mono text-xs text-slate-500">{api.audience}</code>
                    {!api.active ? <Badge tone="red">inactive API</Badge> : null}
                  </div>
                  <Checkbox name="granted" label="Granted" defaultChecked={!!grant} />
                  {api.permissions.length > 0 ? (
                    <CheckboxGroup name="permissions" legend="Permissions" options={api.permissions.map((p) => ({ value: p, label: p }))} defaultValues={grant?.permissions ?? []} />
                  ) : (
                    <p className="text-sm text-slate-500">This API defines no permissions yet.</p>
                  )}
                  <SubmitButton variant="secondary" size="sm">
                    Save access
                  </SubmitButton>
                </ActionForm>
              </div>
            );
          })}
        </div>
      )}
    </Card>
  );
}
