"use client";

import { useEffect, useRef, useState, useSyncExternalStore, type InputHTMLAttributes } from "react";
import { fieldClass } from "./steps/step-form";

const noSubscription = () => () => {};

/** True once the page runs script: without it the toggle could not work, so it is not drawn. */
function useHydrated(): boolean {
  return useSyncExternalStore(
    noSubscription,
    () => true,
    () => false,
  );
}

type PasswordInputProps = Omit<InputHTMLAttributes<HTMLInputElement>, "type" | "className"> & {
  id: string;
  /** The toggle's accessible name, in the page's language ("Show password"). */
  toggleLabel: string;
};

/**
 * A password field with a "show password" toggle. The server renders a plain password input (the
 * form works without JavaScript); the toggle is added once script runs. The field goes back to
 * hidden when its form is submitted, so browsers still recognise a password form to save.
 */
export function PasswordInput({ toggleLabel, ...props }: PasswordInputProps) {
  const hydrated = useHydrated();
  const [shown, setShown] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    const field = input.current;
    const form = field?.form;
    if (!field || !form) return;
    const hide = () => {
      field.type = "password";
      setShown(false);
    };
    form.addEventListener("submit", hide);
    return () => form.removeEventListener("submit", hide);
  }, []);

  return (
    <div className="relative mt-1">
      <input {...props} ref={input} type={shown ? "text" : "password"} className={`${fieldClass} pr-11`} />
      {hydrated ? (
        <button
          type="button"
          aria-label={toggleLabel}
          aria-pressed={shown}
          aria-controls={props.id}
          onClick={() => setShown((s) => !s)}
          className="absolute inset-y-0 right-0 flex w-10 items-center justify-center rounded-r-md text-slate-500 hover:text-slate-800 focus:outline-none focus:ring-2 focus:ring-indigo-300"
        >
          {shown ? <EyeOff /> : <Eye />}
        </button>
      ) : null}
    </div>
  );
}

function Eye() {
  return (
    <svg aria-hidden="true" viewBox="0 0 24 24" width="20" height="20" fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" strokeLinejoin="round">
      <path d="M2 12s3.5-7 10-7 10 7 10 7-3.5 7-10 7S2 12 2 12Z" />
      <circle cx="12" cy="12" r="3" />
    </svg>
  );
}

function EyeOff() {
  return (
    <svg aria-hidden="true" viewBox="0 0 24 24" width="20" height="20" fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" strokeLinejoin="round">
      <path d="M10.6 5.1A10.8 10.8 0 0 1 12 5c6.5 0 10 7 10 7a17.6 17.6 0 0 1-2.9 3.9M6.6 6.6C3.6 8.5 2 12 2 12s3.5 7 10 7c1.9 0 3.6-.6 5-1.5" />
      <path d="M9.9 9.9a3 3 0 0 0 4.2 4.2" />
      <path d="m3 3 18 18" />
    </svg>
  );
}
