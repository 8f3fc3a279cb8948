/** zod pieces for console forms: FormData arrives as strings (and string arrays for repeated fields). The generic ones are lib/surfaces/form-fields.ts'. */
import { z } from "zod";
import { EMAIL_MAX_LENGTH, parseEmail } from "../authn/email-address";

export { checkbox, checked, formDataObject, id, integer, lines, optionalText, text, words } from "../surfaces/form-fields";

/** An email address as lib/authn/email-address.ts reads one, given as shown (its key: `normalizeEmail`). */
export const email = () =>
  z
    .string({ error: "Enter an email address" })
    .trim()
    .max(EMAIL_MAX_LENGTH, `Use at most ${EMAIL_MAX_LENGTH} characters`)
    .refine((value) => parseEmail(value) !== null, "Enter an email address")
    .transform((value) => parseEmail(value)!.display);
