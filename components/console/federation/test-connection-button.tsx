import { ActionForm, SubmitButton } from "@/components/ui/form";
import type { ServerAction } from "@/lib/forms/action-state";

/**
 * "Test the connection": a form (it works without scripts) that sends the administrator's browser
 * through the connection's identity provider and ends on a page of the attributes received and
 * whether a sign-in would be admitted. Nobody is signed in.
 */
export function TestConnectionButton({ action, organizationId, connectionId, connectionName, readOnly }: { action: ServerAction; organizationId: string; connectionId: string; connectionName: string; readOnly: boolean }) {
  return (
    <ActionForm action={action} hidden={{ organization_id: organizationId, connection_id: connectionId }} readOnly={readOnly} label={`Test sign-in through ${connectionName}`} className="mb-3 space-y-2">
      <p className="text-sm text-slate-600">Sign in at the identity provider to see the attributes Latchkey receives and whether a sign-in would be admitted. Nobody is signed in to anything.</p>
      <div>
        <SubmitButton variant="secondary">Test the connection</SubmitButton>
      </div>
    </ActionForm>
  );
}
