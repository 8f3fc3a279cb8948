/** Console forms: FormData arrives as strings (and string arrays for repeated fields); the zod pieces that read them are lib/forms/fields.ts. */
export { checkbox, checked, email, formDataObject, id, integer, lines, optionalText, text, words } from "../forms/fields";
