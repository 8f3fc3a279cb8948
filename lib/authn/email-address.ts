/**
 * An email address, normalized once: every rule that looks at an address (admission by domain,
 * the account lookup, the unique key of an account, sign-up, the console, the workspace file, the
 * address shown) sees it in this form, so that two spellings of one mailbox are never two
 * accounts.
 *
 * The normalized address is what `users.email_normalized` holds: surrounding whitespace removed,
 * the whole address lower-cased (as it always was), and the domain's one trailing dot (the
 * fully-qualified spelling, `acme.test.`) dropped. The address shown is the same address in the
 * case it was written in.
 */
import { isStorableText } from "../text";

/** The longest address kept (RFC 5321's path limit less the brackets). */
export const EMAIL_MAX_LENGTH = 254;

export interface EmailAddress {
  /** The key: lower case, no trailing dot on the domain. */
  normalized: string;
  /** As shown: trimmed, without the domain's trailing dot, in the case it was written in. */
  display: string;
}

/** One local part, one `@`, a domain of at least two non-empty labels; nothing blank. */
const SHAPE = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

/** The address in both forms, or null when the input is not an address an account can have. */
export function parseEmail(raw: string | null | undefined): EmailAddress | null {
  const trimmed = (raw ?? "").trim();
  const at = trimmed.lastIndexOf("@");
  if (at < 1) return null;
  const domain = trimmed.slice(at + 1).replace(/\.$/, "");
  const display = `${trimmed.slice(0, at)}@${domain}`;
  if (display.length > EMAIL_MAX_LENGTH || !SHAPE.test(display) || !isStorableText(display)) return null;
  return { normalized: display.toLowerCase(), display };
}

/** The normalized address (`users.email_normalized`), or null when the input is not an address. */
export function normalizeEmail(raw: string | null | undefined): string | null {
  return parseEmail(raw)?.normalized ?? null;
}
