"use client";

import { useId, useRef, type ReactNode } from "react";
import { buttonClass, type ButtonVariant } from "./button";
import { ConfirmationPanel } from "./confirmation";

/**
 * A submit button that asks first, in a modal <dialog> (focus stays inside, Escape cancels).
 * Confirming submits the button's form. The opener of a destructive action is the quiet `danger`
 * button; the dialog's confirm button is the solid one.
 */
export function ConfirmButton({
  children,
  title,
  message,
  confirmLabel,
  variant = "danger",
  size = "sm",
  disabled,
}: {
  children: ReactNode;
  title: string;
  message: ReactNode;
  confirmLabel: string;
  variant?: ButtonVariant;
  size?: "sm" | "md";
  disabled?: boolean;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  const destructive = variant === "danger";
  return (
    <>
      <button ref={opener} type="button" disabled={disabled} className={buttonClass(variant, size)} onClick={() => dialog.current?.showModal()}>
        {children}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId} className="m-auto w-[min(28rem,calc(100vw-2rem))] rounded-lg bg-transparent p-0 shadow-xl backdrop:bg-slate-900/40">
        <ConfirmationPanel
          title={title}
          titleId={titleId}
          tone={destructive ? "danger" : "neutral"}
          actions={
            <>
              <button type="button" autoFocus className={buttonClass("secondary", "md")} onClick={() => dialog.current?.close()}>
                Cancel
              </button>
              <button
                type="button"
                className={buttonClass(destructive ? "destroy" : variant, "md")}
                onClick={() => {
                  dialog.current?.close();
                  opener.current?.form?.requestSubmit();
                }}
              >
                {confirmLabel}
              </button>
            </>
          }
        >
          {message}
        </ConfirmationPanel>
      </dialog>
    </>
  );
}
