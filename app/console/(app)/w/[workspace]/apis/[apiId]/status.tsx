import { ActionForm, SubmitButton } from "@/components/ui/form";
import { ConfirmedAction } from "@/components/console/confirmed-action";
import { DangerZone, DangerZoneItem } from "@/components/console/danger-zone";
import type { apiFootprint, getApi } from "@/lib/console/apis";
import { countOf } from "@/lib/i18n/plural";
import { actionFor } from "../../../../../_lib/action-for";

type Api = NonNullable<Awaited<ReturnType<typeof getApi>>>;
type ApiFootprint = Awaited<ReturnType<typeof apiFootprint>>;

/** The API's danger zone: deactivating (reversible) or deleting the API, each stating what it ends: its grants and unexpired tokens. */
export function ApiStatusCard({ api, footprint, ws, readOnly }: { api: Api; footprint: ApiFootprint; ws: string; readOnly: boolean }) {
  return (
    <DangerZone>
      <DangerZoneItem title={api.active ? "Deactivate the API" : "Activate the API"} description={api.active ? "Reversible: nothing is deleted." : "The API is inactive. Activating it restores the tokens for it that have not expired."}>
        {api.active ? (
          <ConfirmedAction
            action={actionFor("setApiActive", ws)}
            hidden={{ api_id: api.id, active: "false" }}
            readOnly={readOnly}
            variant="secondary"
            opener="Deactivate API…"
            title={`Deactivate ${api.name}?`}
            consequences={
              <p>
                Applications can no longer request it, and every token for it ({countOf(footprint.grants, "user grant", "user grants")}, {countOf(footprint.accessTokens, "unexpired user access token", "unexpired user access tokens")}, and every service token, which is not stored and so not counted) fails
                introspection, the permission check and refresh while it is inactive. Nothing is deleted: activating it again restores those that have not expired.
              </p>
            }
            confirmValue={api.audience}
            confirmWhat="the audience"
            submitLabel="Deactivate API"
          />
        ) : (
          <ActionForm action={actionFor("setApiActive", ws)} hidden={{ api_id: api.id, active: "true" }} readOnly={readOnly} label="Activate API">
            <SubmitButton variant="secondary">Activate API</SubmitButton>
          </ActionForm>
        )}
      </DangerZoneItem>
      <DangerZoneItem title="Delete the API" description="Not reversible: its permissions, grants and tokens end.">
        <ConfirmedAction
          action={actionFor("deleteApi", ws)}
          hidden={{ api_id: api.id }}
          readOnly={readOnly}
          opener="Delete API…"
          title={`Delete ${api.name} for good?`}
          consequences={
            <>
              <p>
                This removes the API, its permissions from every role, its access from {countOf(footprint.applications, "application", "applications")}, and ends every user grant for it (
                {footprint.grants}) with their refresh tokens, its {countOf(footprint.accessTokens, "unexpired user access token", "unexpired user access tokens")} and every service token for it: introspection says inactive, the permission check
                refuses them, and refresh fails with invalid_grant.
              </p>
              <p>Users stay signed in to their applications; only what was granted for this API ends.</p>
            </>
          }
          confirmValue={api.audience}
          confirmWhat="the audience"
          submitLabel="Delete API"
        />
      </DangerZoneItem>
    </DangerZone>
  );
}
