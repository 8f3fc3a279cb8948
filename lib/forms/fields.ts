/**
 * zod pieces for a form's fields, as a server action receives them: FormData arrives as strings
 * (and string arrays for repeated fields). Beside the answer forms render (`action-state.ts`), so
 * that a feature folder declares its console operations' inputs without lib/console.
 */
import { z } from "zod";
import { EMAIL_MAX_LENGTH, parseEmail } from "../authn/email-address";
import { fieldError } from "../surfaces/operation";

/** FormData as a plain object: a field given once is a string, a repeated one an array. */
export function formDataObject(form: FormData): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(form.keys())) {
    if (key.startsWith("$ACTION")) continue;
    const values = form.getAll(key).filter((v): v is string => typeof v === "string");
    out[key] = values.length === 1 ? values[0] : values;
  }
  return out;
}

/** A textarea of one value per line (blank lines and surrounding spaces dropped). */
export const lines = (max = 100, what = "values") =>
  z.preprocess(
    (v) =>
      (Array.isArray(v) ? v.join("\n") : typeof v === "string" ? v : "")
        .split(/\r?\n/)
        .map((s) => s.trim())
        .filter(Boolean),
    z.array(z.string()).max(max, `Use at most ${max} ${what}`),
  );

/** Space-, comma- or newline-separated words. */
export const words = (max = 1000) =>
  z.preprocess(
    (v) =>
      (Array.isArray(v) ? v.join(" ") : typeof v === "string" ? v : "")
        .split(/[\s,]+/)
        .map((s) => s.trim())
        .filter(Boolean),
    z.array(z.string()).max(max, `Use at most ${max}`),
  );

/** Checked checkboxes (a repeated field): always an array. */
export const checked = () => z.preprocess((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]), z.array(z.string()));

/** A single checkbox: present means on. */
export const checkbox = () => z.preprocess((v) => v === "on" || v === "true" || v === "1", z.boolean());

export const text = (label: string, max = 200) =>
  z
    .string({ error: `Enter ${label}` })
    .trim()
    .min(1, `Enter ${label}`)
    .max(max, `Use at most ${max} characters`);

export const optionalText = (max = 1000) =>
  z.preprocess((v) => (typeof v === "string" && v.trim() === "" ? undefined : typeof v === "string" ? v.trim() : v), z.string().max(max, `Use at most ${max} characters`).optional());

export const integer = (label: string, min: number, max: number) =>
  z.coerce
    .number({ error: `Enter ${label} as a whole number` })
    .int(`Enter ${label} as a whole number`)
    .min(min, `${label[0].toUpperCase()}${label.slice(1)} must be from ${min} to ${max}`)
    .max(max, `${label[0].toUpperCase()}${label.slice(1)} must be from ${min} to ${max}`);

export const id = (label = "an id") => z.string({ error: `Missing ${label}` }).min(1, `Missing ${label}`).max(200);

/** An email address as lib/authn/email-address.ts reads one, given as shown (its key: `normalizeEmail`). */
export const email = () =>
  z
    .string({ error: "Enter an email address" })
    .trim()
    .max(EMAIL_MAX_LENGTH, `Use at most ${EMAIL_MAX_LENGTH} characters`)
    .refine((value) => parseEmail(value) !== null, "Enter an email address")
    .transform((value) => parseEmail(value)!.display);

/**
 * Destructive operations are confirmed by typing what is being removed: the check is on the
 * server, so a form without its dialog still cannot delete. The typed confirmation is optional in
 * the schema, so its absence is reported beside the field.
 */
export const confirmField = () => z.preprocess((v) => (typeof v === "string" ? v.trim() : undefined), z.string().max(300).optional());

/** Refuses unless `typed` is exactly `expected` (the client id, audience, role name or workspace id). */
export function requireConfirmation(typed: string | undefined, expected: string, what: string): void {
  if (typed !== expected) throw fieldError("confirm", `Type ${what} exactly to confirm`);
}
