import type { ReactNode } from "react";
import { buttonClass, type ButtonVariant } from "@/components/ui/button";
import { ConfirmationPanel } from "@/components/ui/confirmation";
import { ActionForm, Field, SubmitButton } from "@/components/ui/form";
import type { ServerAction } from "@/lib/forms/action-state";

/**
 * A destructive change (delete, disable) behind a disclosure that says exactly what it ends and
 * asks for the subject's identifier to be typed. The operation checks the typed value itself
 * (lib/console/confirmation.ts), so this is the explanation, not the guard; it works without
 * JavaScript and from the keyboard (a <details> disclosure, a labelled field, a submit button).
 * It looks like every other confirmation (ConfirmationPanel).
 */
export function ConfirmedAction({
  action,
  hidden,
  opener,
  title,
  consequences,
  confirmValue,
  confirmWhat,
  submitLabel,
  variant = "danger",
  readOnly = false,
}: {
  action: ServerAction;
  hidden: Record<string, string>;
  /** The disclosure's summary, e.g. "Delete application…". */
  opener: string;
  title: string;
  consequences: ReactNode;
  /** What must be typed: the client id, audience, role name or workspace id. */
  confirmValue: string;
  /** How the field names it, e.g. "the client id". */
  confirmWhat: string;
  submitLabel: string;
  variant?: ButtonVariant;
  readOnly?: boolean;
}) {
  const destructive = variant === "danger";
  return (
    <details className="group">
      <summary
        className={`${buttonClass(variant, "md")} cursor-pointer list-none [&::-webkit-details-marker]:hidden ${readOnly ? "pointer-events-none opacity-50" : ""}`}
        aria-disabled={readOnly || undefined}
      >
        {opener}
      </summary>
      <div className="mt-3">
        <ActionForm action={action} hidden={hidden} readOnly={readOnly} label={title} className="space-y-3">
          <ConfirmationPanel title={title} level={3} tone={destructive ? "danger" : "neutral"} actions={<SubmitButton variant={destructive ? "destroy" : variant}>{submitLabel}</SubmitButton>}>
            {consequences}
            <Field
              name="confirm"
              label={`Type ${confirmWhat} to confirm`}
              hint={
                <>
                  Type <code className="font-mono text-slate-800">{confirmValue}</code> exactly.
                </>
              }
              autoComplete="off"
            />
          </ConfirmationPanel>
        </ActionForm>
      </div>
    </details>
  );
}
