"use client";

import { useId, useRef, type ReactNode } from "react";
import { buttonClass, type ButtonVariant } from "./button";

/**
 * A submit button that asks first, in a modal <dialog> (focus stays inside, Escape cancels).
 * Confirming submits the button's form.
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
  return (
    <>
      <button ref={opener} type="button" disabled={disabled} className={buttonClass(variant, size)} onClick={() => dialog.current?.showModal()}>
        {children}
      </button>
      <dialog
        ref={dialog}
        aria-labelledby={titleId}
        className="m-auto w-[min(28rem,calc(100vw-2rem))] rounded-lg border border-slate-200 p-0 shadow-xl backdrop:bg-slate-900/40"
      >
        <div className="p-5">
          <h2 id={titleId} className="text-base font-semibold text-slate-900">
            {title}
          </h2>
          <div className="mt-2 text-sm text-slate-600">{message}</div>
          <div className="mt-5 flex justify-end gap-2">
            <button type="button" autoFocus className={buttonClass("secondary", "md")} onClick={() => dialog.current?.close()}>
              Cancel
            </button>
            <button
              type="button"
              className={buttonClass(variant, "md")}
              onClick={() => {
                dialog.current?.close();
                opener.current?.form?.requestSubmit();
              }}
            >
              {confirmLabel}
            </button>
          </div>
        </div>
      </dialog>
    </>
  );
}
