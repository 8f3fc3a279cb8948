/**
 * The backend handoff's own error type (SPEC.md: account-security error bodies are not the OAuth
 * ones). Every answer is `{"error": CODE, "error_description": text}` with `Cache-Control:
 * no-store` and `Referrer-Policy: no-referrer`; docs/account-security.md lists the codes.
 */
import { codedRule, CodedError, json, type ErrorFamily } from "../http/errors";

export type HandoffErrorCode =
  | "INVALID_REQUEST"
  | "INVALID_CLIENT"
  | "NOT_FOUND"
  | "NOT_AVAILABLE"
  | "REAUTHENTICATION_REQUIRED"
  | "INVALID_HANDOFF"
  | "VERSION_CONFLICT"
  | "ORIGIN_REFUSED"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "RATE_LIMITED"
  | "TEMPORARILY_UNAVAILABLE"
  | "SERVER_ERROR";

export class HandoffError extends CodedError<HandoffErrorCode> {
  constructor(
    readonly status: number,
    readonly code: HandoffErrorCode,
    readonly description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(code, `${code}: ${description}`, { status, family: "account-security", description, headers });
  }
}

export const HANDOFF_ERROR_HEADERS = { "Cache-Control": "no-store", Pragma: "no-cache", "Referrer-Policy": "no-referrer" } as const;

/** A coded error of the handoff's vocabulary as its error body. */
export function handoffErrorResponse(error: CodedError): Response {
  return json({ error: error.code, error_description: error.description }, error.status, { ...HANDOFF_ERROR_HEADERS, ...error.headers });
}

/** A successful answer: JSON, never cached, sending no referrer either. */
export function handoffJson(body: unknown): Response {
  return json(body, 200, { ...HANDOFF_ERROR_HEADERS });
}

export const handoffBadRequest = (description: string) => new HandoffError(400, "INVALID_REQUEST", description);
export const handoffInvalidClient = (description = "Client authentication failed") =>
  new HandoffError(401, "INVALID_CLIENT", description, { "WWW-Authenticate": 'Basic realm="latchkey", charset="UTF-8"' });
export const handoffNotFound = () => new HandoffError(404, "NOT_FOUND", "Not found");
export const notAvailable = (description: string) => new HandoffError(403, "NOT_AVAILABLE", description);
export const reauthenticationRequired = (description = "The user's token, grant or hosted session is no longer valid; the user must sign in again") =>
  new HandoffError(401, "REAUTHENTICATION_REQUIRED", description);
export const invalidHandoff = (description: string) => new HandoffError(400, "INVALID_HANDOFF", description);
export const versionConflict = (current: number) =>
  new HandoffError(409, "VERSION_CONFLICT", `The configuration changed since the version sent; the current version is ${current}`);
export const originRefused = () => new HandoffError(403, "ORIGIN_REFUSED", "Account-security handoff calls come from servers, not from a browser origin");
export const handoffPayloadTooLarge = (limit: number) => new HandoffError(413, "PAYLOAD_TOO_LARGE", `The body must be at most ${limit} bytes`);
export const handoffUnsupportedMediaType = () => new HandoffError(415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json");
export const handoffRateLimited = (retryAfterSeconds: number) =>
  new HandoffError(429, "RATE_LIMITED", "Too many requests; retry after the time in Retry-After", { "Retry-After": String(retryAfterSeconds) });
/** Authority could not be confirmed (database or dependency failure): deny, never allow. */
export const handoffUnavailable = () =>
  new HandoffError(503, "TEMPORARILY_UNAVAILABLE", "Authority cannot be confirmed right now; try again later", { "Retry-After": "5" });
export const handoffUnstorable = () => handoffBadRequest("The request contains a character that is not accepted (U+0000)");

/**
 * The handoff's error family, for failures inside its endpoints and around them (lib/server/router.ts).
 * The per-client request limit of the one client authentication (an OAuth 429) is answered in this shape too.
 */
export const handoffFailures: ErrorFamily = {
  name: "account-security",
  rule: codedRule("account-security", handoffErrorResponse, (error) =>
    error.family === "oauth" && error.status === 429 ? handoffRateLimited(Number(error.headers["Retry-After"] ?? "60")) : null,
  ),
  unstorable: () => handoffErrorResponse(handoffUnstorable()),
  unavailable: () => handoffErrorResponse(handoffUnavailable()),
  internal: (requestId) => handoffErrorResponse(new HandoffError(500, "SERVER_ERROR", `Internal error (request ${requestId})`)),
  rateLimited: (retryAfterSeconds) => handoffErrorResponse(handoffRateLimited(retryAfterSeconds)),
  notFound: () => handoffErrorResponse(handoffNotFound()),
};
