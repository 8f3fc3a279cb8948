import type { ReactNode } from "react";

/** The fields every sign-in step's form carries: the transaction and its CSRF token (bound to the browser's transaction cookie). */
export interface StepFormProps {
  basePath: string;
  txId: string;
  csrf: string;
}

/** A plain server-rendered POST form to a sign-in step (`path` under the issuer): works without JavaScript. */
export function StepForm({ basePath, txId, csrf, path, children, className = "space-y-4", id }: StepFormProps & { path: string; children: ReactNode; className?: string; id?: string }) {
  return (
    <form method="post" action={`${basePath}${path}`} className={className} id={id}>
      <input type="hidden" name="tx" value={txId} />
      <input type="hidden" name="csrf" value={csrf} />
      {children}
    </form>
  );
}

/** A text field's look, without its spacing from the label above. */
export const fieldClass =
  "block w-full rounded-md border border-slate-300 px-3 py-2 text-sm shadow-sm focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-200";
export const inputClass = `mt-1 ${fieldClass}`;
export const primaryButtonClass =
  "w-full rounded-md bg-indigo-600 px-4 py-2 text-sm font-semibold text-white shadow-sm hover:bg-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-300";
export const secondaryButtonClass =
  "w-full rounded-md border border-slate-300 bg-white px-4 py-2 text-sm font-semibold text-slate-800 shadow-sm hover:bg-slate-50 focus:outline-none focus:ring-2 focus:ring-indigo-300";

/**
 * A code from an authenticator app or an email, typed as digits (spaces allowed), with its label:
 * the same field in the sign-in's steps and in the portal (their wrappers differ, so it is the
 * label and the input only).
 */
export function OneTimeCodeField({ id, label, autoFocus = false }: { id: string; label: string; autoFocus?: boolean }) {
  return (
    <>
      <label htmlFor={id} className="block text-sm font-medium text-slate-700">
        {label}
      </label>
      <input id={id} name="code" type="text" inputMode="numeric" pattern="[0-9 ]*" maxLength={8} autoComplete="one-time-code" required autoFocus={autoFocus} className={inputClass} />
    </>
  );
}

export function FormError({ message }: { message?: string }) {
  return message ? (
    <p role="alert" className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800">
      {message}
    </p>
  ) : null;
}

/** What separates a way to sign in from the one above it: an "or" divider, a gap, or nothing (it comes first). */
export type Separator = "or" | "gap" | "none";

export function Divider({ label = "or" }: { label?: string }) {
  return (
    <div className="my-5 flex items-center gap-3 text-xs text-slate-500" aria-hidden="true">
      <span className="h-px flex-1 bg-slate-200" />
      {label}
      <span className="h-px flex-1 bg-slate-200" />
    </div>
  );
}

/** Stands in for a parameter that `WithStrong` shows in bold (never a character of any message). */
export const STRONG_MARK = "\u0000";

/**
 * A translated sentence with one parameter in bold: the message is translated with STRONG_MARK as
 * that parameter, and the value goes where the mark is, wherever the language puts it.
 */
export function WithStrong({ text, strong, className = "font-medium text-slate-900" }: { text: string; strong: ReactNode; className?: string }) {
  const [before, ...after] = text.split(STRONG_MARK);
  return (
    <>
      {before}
      {after.length > 0 ? <strong className={className}>{strong}</strong> : null}
      {after.join("")}
    </>
  );
}
