/**
 * A refusal decided by a rule (a protocol error, a permission-check problem, a setting an operator
 * cannot use): never a dependency failure, whatever it wraps (lib/http/errors.ts), and inside an
 * endpoint's transaction it commits what was decided before it (lib/http/transaction.ts).
 */
export class RuleError extends Error {}

/**
 * Whose vocabulary a coded error's code belongs to, and so which boundary answers it as it is:
 * - "oauth": RFC 6749's error codes (`OAuthError`), the OAuth JSON body and the hosted pages;
 * - "problem": the permission check's problem types (`CheckError`), its problem document;
 * - "account-security": the backend handoff's codes (`HandoffError`), its error body;
 * - "scim": SCIM's error types (`ScimError`, lib/organizations/scim/errors.ts), its error resource;
 * - "operator": a rule about what an operator asked (a setting, a secret, a key, a logo): the
 *   console shows its text beside its `field` or over the form, the command line prints it.
 */
export type CodedErrorFamily = "oauth" | "problem" | "account-security" | "scim" | "operator";

export interface CodedErrorOptions {
  /** The HTTP status a route answers it with (400 unless said). */
  status?: number;
  /** Its vocabulary ("operator" unless said). */
  family?: CodedErrorFamily;
  /** The text the answer shows (the message unless said: the wire families' messages prefix the code). */
  description?: string;
  /** Headers the answer carries (WWW-Authenticate, Retry-After). */
  headers?: Record<string, string>;
  /** The input field the refusal is about, as the console's form names it; none: the whole form. */
  field?: string;
  cause?: unknown;
}

/**
 * The one coded domain error: a code, the HTTP status it is answered with, its family, and the text
 * a person reads. Every rule's refusal is one (its exported class a subclass, keeping its name),
 * and each boundary maps it in one place:
 * - HTTP routes: `failureResponse` (lib/http/errors.ts), where the route's error family answers the
 *   coded errors of its vocabulary in its own body (`codedRule`), keeping their status;
 * - the console: `runOperation` (lib/console/operation.ts) answers an "operator" error as
 *   `formRefusal` (lib/surfaces/operation.ts) words it;
 * - the command line: `runCommand` (lib/cli/commands.ts) prints an "operator" error, exit status 1.
 */
export class CodedError<Code extends string = string> extends RuleError {
  readonly status: number;
  readonly family: CodedErrorFamily;
  readonly description: string;
  readonly headers: Record<string, string>;
  readonly field: string | undefined;

  constructor(
    readonly code: Code,
    message: string,
    options: CodedErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status ?? 400;
    this.family = options.family ?? "operator";
    this.description = options.description ?? message;
    this.headers = options.headers ?? {};
    this.field = options.field;
  }
}
