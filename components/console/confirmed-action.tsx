import type { ReactNode } from "react";
import { buttonClass, type ButtonVariant } from "@/components/ui/button";
import { ActionForm, Field, SubmitButton } from "@/components/ui/form";
import type { ServerAction } from "@/lib/forms/action-state";

/**
 * A destructive change (delete, disable) behind a disclosure that says exactly what it ends and
 * asks for the subject's identifier to be typed. The operation checks the typed value itself
 * (lib/console/confirmation.ts), so this is the explanation, not the guard; it works without
 * JavaScript and from the keyboard (a <details> disclosure, a labelled field, a submit button).
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
  return (
    <details className="group rounded-md border border-slate-200 open:border-red-200 open:bg-red-50/40">
      <summary
        className={`${buttonClass(variant, "md")} m-3 cursor-pointer list-none [&::-webkit-details-marker]:hidden ${readOnly ? "pointer-events-none opacity-50" : ""}`}
        aria-disabled={readOnly || undefined}
      >
        {opener}
      </summary>
      <div className="border-t border-red-100 px-4 pb-4 pt-3">
        <ActionForm action={action} hidden={hidden} readOnly={readOnly} label={title}>
          <h3 className="text-sm font-semibold text-slate-900">{title}</h3>
          <div className="space-y-2 text-sm text-slate-700">{consequences}</div>
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
          <SubmitButton variant={variant}>{submitLabel}</SubmitButton>
        </ActionForm>
      </div>
    </details>
  );
}
