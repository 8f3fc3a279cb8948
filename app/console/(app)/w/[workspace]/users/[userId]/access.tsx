import { ConfirmButton } from "@/components/ui/confirm-button";
import { ActionForm, SubmitButton } from "@/components/ui/form";
import { ConfirmedAction } from "@/components/console/confirmed-action";
import { DangerZone, DangerZoneItem } from "@/components/console/danger-zone";
import type { UserFootprint, UserRow } from "@/lib/console/users";
import { countOf } from "@/lib/i18n/plural";
import { actionFor } from "../../../../../_lib/action-for";

/** The user's danger zone: disabling (the account stays) or deleting the user, each stating what it ends now: the user's footprint. */
export function UserDangerZone({ user, footprint, ws, readOnly }: { user: UserRow; footprint: UserFootprint; ws: string; readOnly: boolean }) {
  const endsText = `${countOf(footprint.sessions, "live sign-in session", "live sign-in sessions")}, ${countOf(footprint.grants, "application grant", "application grants")} (with their refresh and access tokens) and ${countOf(footprint.portalSessions, "account-security portal session", "account-security portal sessions")}`;
  const hidden = { user_id: user.id };
  return (
    <DangerZone>
      <DangerZoneItem
        title={user.status === "active" ? "Disable the user" : "Enable the user"}
        description={user.status === "active" ? "Keeps the account and ends its access now." : "The user is disabled. Enabling lets them sign in again."}
      >
        <ActionForm action={actionFor("setUserStatus", ws)} hidden={{ ...hidden, status: user.status === "active" ? "disabled" : "active" }} readOnly={readOnly} label="User status">
          <div>
            {user.status === "active" ? (
              <ConfirmButton
                title={`Disable ${user.email}?`}
                message={`They cannot sign in, and this ends their ${endsText} at once. Enabling them again later does not bring these back: they sign in anew.`}
                confirmLabel="Disable user"
                size="md"
              >
                Disable user
              </ConfirmButton>
            ) : (
              <SubmitButton variant="secondary">Enable user</SubmitButton>
            )}
          </div>
        </ActionForm>
      </DangerZoneItem>
      <DangerZoneItem title="Delete the user" description="Removes the account for good.">
        <ConfirmedAction
          action={actionFor("deleteUser", ws)}
          hidden={hidden}
          readOnly={readOnly}
          opener="Delete user…"
          title={`Delete ${user.email} for good?`}
          consequences={
            <>
              <p>This ends their {endsText}, and removes their password, factors, linked sign-ins, roles and organization memberships.</p>
              <p>The audit log keeps what happened. Creating a user with the same email later starts a new account.</p>
            </>
          }
          confirmValue={user.email}
          confirmWhat="the user's email"
          submitLabel="Delete user"
        />
      </DangerZoneItem>
    </DangerZone>
  );
}
