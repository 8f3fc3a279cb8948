import { Card } from "@/components/ui/card";
import { ActionForm, Checkbox, Field, SubmitButton } from "@/components/ui/form";
import { PASSWORD_MIN_LENGTH } from "@/lib/authn/password";
import type { UserRow } from "@/lib/console/users";
import { actionFor } from "../../../../../_lib/action-for";

/** The user's name and whether their address is verified, beside setting their password. */
export function ProfileCards({ user, ws, readOnly }: { user: UserRow; ws: string; readOnly: boolean }) {
  const hidden = { user_id: user.id };
  return (
    <div className="grid gap-6 lg:grid-cols-2">
      <Card title="Profile">
        <ActionForm action={actionFor("updateUserProfile", ws)} hidden={hidden} readOnly={readOnly} successMessage="Saved." label="Profile">
          <Field name="name" label="Name" optional defaultValue={user.name ?? ""} />
          <Checkbox name="email_verified" label="The email address is verified" defaultChecked={user.emailVerified} />
          <SubmitButton variant="secondary">Save profile</SubmitButton>
        </ActionForm>
      </Card>
      <Card title="Password">
        <ActionForm action={actionFor("setUserPassword", ws)} hidden={hidden} readOnly={readOnly} successMessage="Password set." label="Set password">
          <Field name="password" label="New password" type="password" hint={`At least ${PASSWORD_MIN_LENGTH} characters. Existing sessions are not ended; end them below if needed.`} />
          <SubmitButton variant="secondary">Set password</SubmitButton>
        </ActionForm>
      </Card>
    </div>
  );
}
