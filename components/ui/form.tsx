"use client";

import { createContext, useActionState, useContext, useId, type ReactNode } from "react";
import { useFormStatus } from "react-dom";
import { idleState, type ActionState, type ServerAction } from "@/lib/forms/action-state";
import { buttonClass, type ButtonVariant } from "./button";

interface FormContext {
  state: ActionState;
  pending: boolean;
}

const Ctx = createContext<FormContext>({ state: idleState, pending: false });

export function useConsoleForm(): FormContext {
  return useContext(Ctx);
}

/**
 * A server-action form with inline errors: fields read the action's state, show their error and
 * keep what was typed when the submission fails. `readOnly` renders it disabled (viewers); the
 * server refuses the change anyway.
 */
export function ActionForm({
  action,
  children,
  hidden = {},
  readOnly = false,
  className = "space-y-4",
  successMessage,
  label,
}: {
  action: ServerAction;
  children: ReactNode;
  hidden?: Record<string, string>;
  readOnly?: boolean;
  className?: string;
  successMessage?: string;
  label?: string;
}) {
  const [state, formAction, pending] = useActionState(action, idleState);
  return (
    <form action={formAction} aria-label={label} noValidate>
      {Object.entries(hidden).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      <Ctx.Provider value={{ state, pending }}>
        <fieldset disabled={readOnly} className={`min-w-0 ${className}`}>
          <FormMessage successMessage={successMessage} />
          {children}
        </fieldset>
      </Ctx.Provider>
    </form>
  );
}

function FormMessage({ successMessage }: { successMessage?: string }) {
  const { state } = useConsoleForm();
  if (state.status === "error") {
    const fieldCount = Object.keys(state.fieldErrors).length;
    const text = state.formError ?? (fieldCount ? `Check the ${fieldCount === 1 ? "field" : "fields"} marked below.` : "The change was not saved.");
    return (
      <p role="alert" className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800">
        {text}
      </p>
    );
  }
  if (state.status === "draft") {
    return (
      // A draft's message may name a long address (the identity provider's entity ID): it wraps anywhere.
      <p role="status" className="rounded-md border border-indigo-200 bg-indigo-50 px-3 py-2 text-sm text-indigo-900 [overflow-wrap:anywhere]">
        {state.message}
      </p>
    );
  }
  if (state.status === "ok" && successMessage) {
    return (
      <p role="status" className="rounded-md border border-emerald-200 bg-emerald-50 px-3 py-2 text-sm text-emerald-800">
        {successMessage}
      </p>
    );
  }
  return null;
}

function fieldState(state: ActionState, name: string) {
  const error = state.status === "error" ? state.fieldErrors[name] : undefined;
  // A failed submission and a draft both put their values back in the fields.
  const echoed = (state.status === "error" || state.status === "draft") && state.values ? state.values : undefined;
  return { error, submitted: echoed?.[name], failed: !!echoed };
}

const inputClass =
  "mt-1 block w-full rounded-md border px-3 py-2 text-sm shadow-sm focus:outline-none focus:ring-2 disabled:bg-slate-50 disabled:text-slate-500";
const okBorder = "border-slate-300 focus:border-indigo-500 focus:ring-indigo-200";
const errorBorder = "border-red-400 focus:border-red-500 focus:ring-red-200";

function Label({ htmlFor, children, optional }: { htmlFor: string; children: ReactNode; optional?: boolean }) {
  return (
    <label htmlFor={htmlFor} className="block text-sm font-medium text-slate-700">
      {children}
      {optional ? <span className="ml-1 font-normal text-slate-500">(optional)</span> : null}
    </label>
  );
}

/**
 * A field's hint, or its error in the hint's place: never both (an error such as "Use at least 12
 * characters" says what the hint "At least 12 characters." said, and more urgently).
 */
function Help({ id, hint, error }: { id: string; hint?: ReactNode; error?: string }) {
  if (error) {
    return (
      <p id={`${id}-error`} className="mt-1 text-sm text-red-700">
        {error}
      </p>
    );
  }
  return hint ? (
    <p id={`${id}-hint`} className="mt-1 text-xs text-slate-500">
      {hint}
    </p>
  ) : null;
}

const describedBy = (id: string, hint?: ReactNode, error?: string) => (error ? `${id}-error` : hint ? `${id}-hint` : undefined);

export function Field({
  name,
  label,
  type = "text",
  defaultValue,
  hint,
  optional,
  autoComplete,
  placeholder,
  min,
  max,
  className = "",
  required,
}: {
  name: string;
  label: string;
  type?: "text" | "email" | "password" | "number" | "url" | "datetime-local";
  defaultValue?: string | number;
  hint?: ReactNode;
  optional?: boolean;
  autoComplete?: string;
  placeholder?: string;
  min?: number;
  max?: number;
  className?: string;
  required?: boolean;
}) {
  const id = useId();
  const { state } = useConsoleForm();
  const { error, submitted, failed } = fieldState(state, name);
  const value = type === "password" ? undefined : failed ? (typeof submitted === "string" ? submitted : "") : defaultValue;
  return (
    <div className={className}>
      <Label htmlFor={id} optional={optional}>
        {label}
      </Label>
      <input
        // Remount when the server's value changes, so a saved edit shows what was stored.
        key={`${state.status}-${"at" in state ? state.at : 0}`}
        id={id}
        name={name}
        type={type}
        defaultValue={value}
        autoComplete={autoComplete ?? (type === "password" ? "new-password" : "off")}
        placeholder={placeholder}
        min={min}
        max={max}
        required={required}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, hint, error)}
        className={`${inputClass} ${error ? errorBorder : okBorder}`}
      />
      <Help id={id} hint={hint} error={error} />
    </div>
  );
}

export function TextArea({ name, label, defaultValue, hint, optional, rows = 3, placeholder }: { name: string; label: string; defaultValue?: string; hint?: ReactNode; optional?: boolean; rows?: number; placeholder?: string }) {
  const id = useId();
  const { state } = useConsoleForm();
  const { error, submitted, failed } = fieldState(state, name);
  const value = failed ? (Array.isArray(submitted) ? submitted.join("\n") : (submitted ?? "")) : defaultValue;
  return (
    <div>
      <Label htmlFor={id} optional={optional}>
        {label}
      </Label>
      <textarea
        key={`${state.status}-${"at" in state ? state.at : 0}`}
        id={id}
        name={name}
        rows={rows}
        defaultValue={value}
        placeholder={placeholder}
        spellCheck={false}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, hint, error)}
        className={`${inputClass} font-mono ${error ? errorBorder : okBorder}`}
      />
      <Help id={id} hint={hint} error={error} />
    </div>
  );
}

export function Select({ name, label, options, defaultValue, hint }: { name: string; label: string; options: { value: string; label: string }[]; defaultValue?: string; hint?: ReactNode }) {
  const id = useId();
  const { state } = useConsoleForm();
  const { error, submitted, failed } = fieldState(state, name);
  const value = failed && typeof submitted === "string" ? submitted : defaultValue;
  return (
    <div>
      <Label htmlFor={id}>{label}</Label>
      <select
        key={`${state.status}-${"at" in state ? state.at : 0}`}
        id={id}
        name={name}
        defaultValue={value}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, hint, error)}
        className={`${inputClass} ${error ? errorBorder : okBorder}`}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      <Help id={id} hint={hint} error={error} />
    </div>
  );
}

/** One checkbox (on/off). */
export function Checkbox({ name, label, defaultChecked, hint }: { name: string; label: string; defaultChecked?: boolean; hint?: ReactNode }) {
  const id = useId();
  const { state } = useConsoleForm();
  const { error, submitted, failed } = fieldState(state, name);
  const checked = failed ? submitted === "on" : defaultChecked;
  return (
    <div>
      <div className="flex items-start gap-2">
        <input
          key={`${state.status}-${"at" in state ? state.at : 0}`}
          id={id}
          name={name}
          type="checkbox"
          defaultChecked={checked}
          aria-describedby={describedBy(id, hint, error)}
          className="mt-0.5 h-4 w-4 rounded border-slate-300 text-indigo-600 focus:ring-indigo-300"
        />
        <label htmlFor={id} className="text-sm text-slate-700">
          {label}
        </label>
      </div>
      <Help id={id} hint={hint} error={error} />
    </div>
  );
}

/** Several checkboxes under one name (each checked value is submitted). */
export function CheckboxGroup({ name, legend, options, defaultValues = [], hint }: { name: string; legend: string; options: { value: string; label: string }[]; defaultValues?: string[]; hint?: ReactNode }) {
  const id = useId();
  const { state } = useConsoleForm();
  const { error, submitted, failed } = fieldState(state, name);
  const values = failed ? (Array.isArray(submitted) ? submitted : submitted ? [submitted] : []) : defaultValues;
  return (
    <fieldset aria-describedby={describedBy(id, hint, error)}>
      <legend className="text-sm font-medium text-slate-700">{legend}</legend>
      <div className="mt-1 flex flex-wrap gap-x-4 gap-y-1">
        {options.map((o) => (
          <label key={`${o.value}-${state.status}-${"at" in state ? state.at : 0}`} className="flex items-center gap-1.5 text-sm text-slate-700">
            <input type="checkbox" name={name} value={o.value} defaultChecked={values.includes(o.value)} className="h-4 w-4 rounded border-slate-300 text-indigo-600 focus:ring-indigo-300" />
            <span className="font-mono text-xs">{o.label}</span>
          </label>
        ))}
      </div>
      <Help id={id} hint={hint} error={error} />
    </fieldset>
  );
}

/** Checkboxes of one name, stacked, each with its own description: a list of switches posted as the values checked. */
export function SwitchList({ name, legend, options, defaultValues = [] }: { name: string; legend: string; options: { value: string; label: string; hint: string }[]; defaultValues?: string[] }) {
  const id = useId();
  const { state } = useConsoleForm();
  const { error, submitted, failed } = fieldState(state, name);
  const values = failed ? (Array.isArray(submitted) ? submitted : submitted ? [submitted] : []) : defaultValues;
  return (
    <fieldset aria-describedby={describedBy(id, undefined, error)}>
      <legend className="sr-only">{legend}</legend>
      <div className="space-y-3">
        {options.map((o) => (
          <div key={`${o.value}-${state.status}-${"at" in state ? state.at : 0}`} className="flex items-start gap-2">
            <input
              id={`${id}-${o.value}`}
              type="checkbox"
              name={name}
              value={o.value}
              defaultChecked={values.includes(o.value)}
              aria-describedby={`${id}-${o.value}-hint`}
              className="mt-0.5 h-4 w-4 rounded border-slate-300 text-indigo-600 focus:ring-indigo-300"
            />
            <div>
              <label htmlFor={`${id}-${o.value}`} className="text-sm font-medium text-slate-700">
                {o.label}
              </label>
              <p id={`${id}-${o.value}-hint`} className="text-sm text-slate-500">
                {o.hint}
              </p>
            </div>
          </div>
        ))}
      </div>
      <Help id={id} error={error} />
    </fieldset>
  );
}

export function SubmitButton({ children, variant = "primary", size = "md" }: { children: ReactNode; variant?: ButtonVariant; size?: "sm" | "md" }) {
  const { pending } = useFormStatus();
  return (
    <button type="submit" disabled={pending} aria-disabled={pending} className={buttonClass(variant, size)}>
      {pending ? "Working…" : children}
    </button>
  );
}
