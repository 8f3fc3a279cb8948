/** Console forms: FormData arrives as strings (and string arrays for repeated fields); the zod pieces that read them are lib/forms/fields.ts. */
export { checkbox, checked, email, id, integer, lines, optionalText, text, words } from "../forms/fields";

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
