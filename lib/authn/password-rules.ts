/**
 * How long a password may be, the one rule every form and check reads: sign-up, the portal, the
 * console, the workspace file and the hosted form's own `minLength`/`maxLength` (a module of its
 * own, so that a page's markup can import it without the hashing's native module).
 */
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 256;
