import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm, SubmitButton } from "@/components/ui/form";
import { ConfirmedAction } from "@/components/console/confirmed-action";
import { DangerZone, DangerZoneItem } from "@/components/console/danger-zone";
import type { ApplicationRow } from "@/lib/console/applications";
import { countOf } from "@/lib/i18n/plural";
import { actionFor } from "../../../../../_lib/action-for";

/** The application's danger zone: disabling (reversible) or deleting it, each stating what it ends: its grants and unexpired tokens. */
export function ApplicationDangerZone({ app, footprint, ws, readOnly }: { app: ApplicationRow; footprint: { grants: number; accessTokens: number }; ws: string; readOnly: boolean }) {
  const confidential = app.type !== "PUBLIC";
  const hidden = { client_id: app.clientId };
  return (
    <DangerZone>
      <DangerZoneItem
        title={app.active ? "Disable the application" : "Enable the application"}
        description={
          app.active
            ? "Reversible: nothing is deleted, and enabling it again restores the tokens and grants that have not expired."
            : "The application is disabled. Enable it to let it sign users in again: tokens and grants that have not expired work again."
        }
      >
        <ActionForm action={actionFor("setApplicationActive", ws)} hidden={{ ...hidden, active: app.active ? "false" : "true" }} readOnly={readOnly} label="Application status">
          <div>
            {app.active ? (
              <ConfirmButton
                title={`Disable ${app.name}?`}
                message={`No one can sign in to it, and every token and grant it holds (${countOf(footprint.grants, "grant", "grants")}, ${countOf(footprint.accessTokens, "unexpired user access token", "unexpired user access tokens")}, and every service token, which is not stored and so not counted) fails introspection, UserInfo, the permission check and refresh while it is disabled. Nothing is deleted: enabling it again restores those that have not expired.`}
                confirmLabel="Disable"
                size="md"
              >
                Disable application
              </ConfirmButton>
            ) : (
              <SubmitButton variant="secondary">Enable application</SubmitButton>
            )}
          </div>
        </ActionForm>
      </DangerZoneItem>
      <DangerZoneItem title="Delete the application" description="Not reversible: its secrets, API access, grants and tokens end, and asks for the client id.">
        <ConfirmedAction
          action={actionFor("deleteApplication", ws)}
          hidden={hidden}
          readOnly={readOnly}
          opener="Delete application…"
          title={`Delete ${app.name} for good?`}
          consequences={
            <>
              <p>
                This removes the application{confidential ? ", its client secrets" : ""} and its API access, and ends every grant it holds ({footprint.grants}) with their refresh
                tokens, its {countOf(footprint.accessTokens, "unexpired user access token", "unexpired user access tokens")}, and every service token it was issued: from now on introspection says inactive, UserInfo and the permission check refuse them, and
                refresh fails.
              </p>
              <p>Users&apos; hosted sessions stay (they serve other applications). A new application with the same client id inherits nothing.</p>
            </>
          }
          confirmValue={app.clientId}
          confirmWhat="the client id"
          submitLabel="Delete application"
        />
      </DangerZoneItem>
    </DangerZone>
  );
}
