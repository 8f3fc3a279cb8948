import { CodedError, RuleError, type CodedErrorFamily } from "../coded-error";
import { signal } from "../signals";
import { lightResponse } from "./response";
import { logError } from "./log";

// A refusal decided by a rule, and the one coded domain error every boundary's family answers (lib/coded-error.ts).
export { CodedError, RuleError, type CodedErrorFamily };

/** A request body over its route's limit; each boundary answers it in its own shape. */
export class BodyTooLarge extends RuleError {
  constructor() {
    super("Request body too large");
  }
}

/** JSON response; `Cache-Control: no-store` unless the caller sets its own caching. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  const caching: Record<string, string> = "Cache-Control" in headers ? {} : { "Cache-Control": "no-store", Pragma: "no-cache" };
  return lightResponse(JSON.stringify(body), status, { "Content-Type": "application/json; charset=utf-8", ...caching, ...headers });
}

const DRIVER_CODES = new Set([
  // Node sockets and DNS.
  "ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EHOSTUNREACH", "EHOSTDOWN", "ENETUNREACH", "ENETDOWN",
  "EADDRNOTAVAIL", "EAI_AGAIN", "ERR_SOCKET_CLOSED", "ERR_STREAM_DESTROYED",
  // postgres.js.
  "CONNECT_TIMEOUT", "CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED",
  // db/client.ts: a statement with no connection, or no answer, within its bound.
  "DATABASE_TIMEOUT",
]);

/**
 * SQLSTATEs that mean the database could not confirm or record anything right now, as opposed to
 * a statement it refused on its merits:
 * - classes 08 (connection), 28 (the database refused our credentials), 53 (insufficient
 *   resources), 55 (object not in prerequisite state: 55000 "database is not accepting
 *   connections", 55P03 lock not available, 55006 object in use), 57 (operator intervention:
 *   57P01 admin shutdown, 57P03 cannot connect now, 57014 statement timeout), 58 (system);
 * - 3D000 (the database does not exist), 25006 (read-only transaction: a standby after failover),
 *   25P03 (idle-in-transaction timeout), 40001 and 40P01 (serialization failure, deadlock: a
 *   retry may succeed).
 */
const DEPENDENCY_SQLSTATE = /^(?:(?:08|28|53|55|57|58)[0-9A-Z]{3}|3D000|25006|25P03|40001|40P01)$/;

/** What a driver says when its connection went away without a code. */
const DEPENDENCY_MESSAGE = /PGlite is closed|Connection terminated|connect ECONNREFUSED|write after end/i;

/**
 * The one classification of "authority cannot be confirmed": database and network failures (as
 * opposed to rule violations) become 503 in every error family, never a denial that looks final
 * nor a 500. Drivers wrap the socket error, so the whole `cause` chain is read (and an
 * AggregateError's errors: Node tries each address of a host).
 */
function isDependencyFailure(error: unknown): boolean {
  for (const e of errorCauses(error)) {
    if (e instanceof RuleError) return false;
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && (DRIVER_CODES.has(code) || DEPENDENCY_SQLSTATE.test(code))) return true;
    if (e.name === "TimeoutError" || DEPENDENCY_MESSAGE.test(e.message)) return true;
    if (e instanceof AggregateError && e.errors.some((inner) => isDependencyFailure(inner))) return true;
  }
  return false;
}

/**
 * An error and its `cause` chain, outermost first, at most 10 links (drivers, drizzle and
 * openid-client wrap the error that matters): every value, the last one possibly not an Error.
 */
export function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e: unknown = error; e !== undefined && e !== null && chain.length < 10; e = e instanceof Error ? e.cause : undefined) chain.push(e);
  return chain;
}

/** The Error links of `causes(error)`. */
const errorCauses = (error: unknown): Error[] => causes(error).filter((e): e is Error => e instanceof Error);

/**
 * The database refused a text value: 22021 (invalid byte sequence, e.g. U+0000 in `text`) or
 * 22P05 (untranslatable character, e.g. `\u0000` in `jsonb`). Input that slipped past the edge
 * check: a client error (400), never a 500 or a 503.
 */
function isUnstorableText(error: unknown): boolean {
  for (const e of errorCauses(error)) {
    const code = (e as { code?: unknown }).code;
    if (code === "22021" || code === "22P05") return true;
  }
  return false;
}

/** The database refused a row for a unique key (23505): a concurrent writer got there first, or the value is taken. */
export function isUniqueViolation(error: unknown): boolean {
  return errorCauses(error).some((e) => (e as { code?: unknown }).code === "23505");
}

/**
 * An error as the log may show it: a failed statement's SQL text but never its parameters (token
 * hashes, emails), which drizzle puts in its error message; then the causes and the stack frames.
 */
export function loggableError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const lines: string[] = [];
  for (const e of errorCauses(error)) {
    const query = (e as { query?: unknown }).query;
    const code = (e as { code?: unknown }).code;
    const head = typeof query === "string" && "params" in e ? `Failed query: ${query}` : e.message;
    lines.push(`${lines.length ? "caused by " : ""}${e.name}${typeof code === "string" ? ` [${code}]` : ""}: ${head}`);
  }
  const frames = (error.stack ?? "").split("\n").filter((line) => /^\s+at /.test(line));
  return [...lines, ...frames].join("\n");
}

/** A dependency failure in one log line: the error and its first cause, without statement parameters. */
function dependencyFailureSummary(error: unknown): string {
  return loggableError(error).split("\n").slice(0, 2).join("; ");
}

/** The error families, by name. */
export type ErrorFamilyName = "oauth" | "hosted" | "problem" | "account-security" | "scim";

/**
 * One route's error family: how it answers each class of failure in its own shape (the OAuth
 * JSON body, the permission check's problem document, the account-security handoff's error body,
 * a hosted page). `failureResponse` decides the class; the family only words the answer.
 */
export interface ErrorFamily {
  /** Its name, as a route declares it (lib/http/route.ts `errors`) and `latchkey_dependency_failures_total{family}` counts its 503s. */
  name: ErrorFamilyName;
  /** The family's answer to a rule error it knows (keeping that error's status); null for anything else. */
  rule(error: unknown): Response | null;
  /** Text the database cannot store: a client error (400). */
  unstorable(): Response;
  /** Authority cannot be confirmed right now (a dependency failure): 503, fail closed. */
  unavailable(): Response;
  /** Anything else: a 500 that names only the request id under which the log shows the error. */
  internal(requestId: string): Response;
  /** Too many requests (a declared limit is reached): 429 with Retry-After. */
  rateLimited(retryAfterSeconds: number): Response;
  /** The route's workspace does not exist. */
  notFound(): Response;
}

/**
 * An error family's rule: the coded errors of its vocabulary (`family`), answered by `render`
 * with their own status; `translate` words a coded error of another vocabulary as one of its own
 * (or returns null). Anything else is no rule error of this family.
 */
export function codedRule(
  family: CodedErrorFamily,
  render: (error: CodedError) => Response,
  translate?: (error: CodedError) => CodedError | null,
): ErrorFamily["rule"] {
  return (error) => {
    if (!(error instanceof CodedError)) return null;
    const own = error.family === family ? error : (translate?.(error) ?? null);
    return own && render(own);
  };
}

/** How soon a client may try again after a 503 (a failover or a restart of the database takes seconds). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = "5";

/**
 * The one failure mapping of every boundary: a rule error keeps its status, unstorable text is
 * 400, a dependency failure 503 (logged in one line, without statement parameters), anything else
 * a 500 that leaks nothing but an error id (the error logged in full under it, with the id of the
 * request it concerns: lib/http/log.ts). `where` names the boundary in the log.
 */
export function failureResponse(family: ErrorFamily, error: unknown, where?: string): Response {
  const ruled = family.rule(error);
  if (ruled) return ruled;
  if (isUnstorableText(error)) return family.unstorable();
  const at = where ? `${where}: ` : "";
  if (isDependencyFailure(error)) {
    logError(`${at}dependency failure`, dependencyFailureSummary(error));
    signal("dependency_failed", { family: family.name });
    const response = family.unavailable();
    // Every 503 says when to try again, whichever family worded it.
    if (!response.headers.has("retry-after")) response.headers.set("Retry-After", UNAVAILABLE_RETRY_AFTER_SECONDS);
    return response;
  }
  const id = crypto.randomUUID();
  logError(`${at}internal error (${id})`, loggableError(error));
  return family.internal(id);
}
