import { ActionForm, SubmitButton } from "@/components/ui/form";
import type { ServerAction } from "@/lib/forms/action-state";
import type { ButtonVariant } from "@/components/ui/button";

/** "Try sign-in" for an application: a form (it works without scripts) that opens its hosted sign-in, ending on the console's result page. */
export function TrySignInButton({ action, clientId, readOnly, variant = "secondary", label = "Try sign-in" }: { action: ServerAction; clientId: string; readOnly: boolean; variant?: ButtonVariant; label?: string }) {
  return (
    <ActionForm action={action} hidden={{ client_id: clientId }} readOnly={readOnly} label={`${label}: ${clientId}`} className="space-y-2">
      <div>
        <SubmitButton variant={variant}>{label}</SubmitButton>
      </div>
    </ActionForm>
  );
}
