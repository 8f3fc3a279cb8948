/**
 * The permission check's own error shape (SPEC.md: error bodies differ between the OAuth boundary
 * and the permission check). An RFC 9457 problem document: `type`, `title`, `status`, `detail`,
 * served as application/problem+json with no-store. Callers branch on the status, never on the
 * body: every non-200 answer is a denial.
 */
import { codedRule, CodedError, type ErrorFamily } from "../http/errors";
import { lightResponse } from "../http/response";
import { notFoundResponse } from "../oauth/errors";
export type CheckProblem =
  | "bad_request"
  | "invalid_token"
  | "payload_too_large"
  | "unsupported_media_type"
  | "unavailable"
  | "rate_limited"
  | "server_error";

const TITLES: Record<CheckProblem, string> = {
  bad_request: "Bad request",
  invalid_token: "Invalid or expired access token",
  payload_too_large: "Request body too large",
  unsupported_media_type: "Unsupported media type",
  unavailable: "Authority cannot be confirmed",
  rate_limited: "Too many requests",
  server_error: "Internal error",
};

export class CheckError extends CodedError<CheckProblem> {
  constructor(
    readonly status: number,
    readonly problem: CheckProblem,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(problem, `${problem}: ${detail}`, { status, family: "problem", description: detail, headers });
    this.name = "CheckError";
  }
}

export const badRequest = (detail: string) => new CheckError(400, "bad_request", detail);
export const invalidCheckToken = (detail = "The access token is missing, invalid or expired") =>
  new CheckError(401, "invalid_token", detail, { "WWW-Authenticate": 'Bearer realm="latchkey", error="invalid_token"' });
export const checkPayloadTooLarge = (limit: number) => new CheckError(413, "payload_too_large", `The body may be at most ${limit} bytes`);
export const checkUnsupportedMediaType = () => new CheckError(415, "unsupported_media_type", "The body must be application/json");
export const checkUnavailable = () =>
  new CheckError(503, "unavailable", "Authority cannot be confirmed right now; deny the operation and retry later", { "Retry-After": "5" });

/** A coded error of the permission check's vocabulary as its problem document. */
export function checkErrorResponse(error: CodedError<CheckProblem>): Response {
  return lightResponse(
    JSON.stringify({ type: `urn:latchkey:authorization-check:${error.code}`, title: TITLES[error.code], status: error.status, detail: error.description }),
    error.status,
    { "Content-Type": "application/problem+json", "Cache-Control": "no-store", Pragma: "no-cache", ...error.headers },
  );
}

/** The permission check's error family: its problem document (an unknown workspace is the generic 404 of every route). */
export const checkFailures: ErrorFamily = {
  name: "problem",
  rule: codedRule("problem", (error) => checkErrorResponse(error as CodedError<CheckProblem>)),
  unstorable: () => checkErrorResponse(badRequest("The request contains a character that is not accepted (U+0000)")),
  unavailable: () => checkErrorResponse(checkUnavailable()),
  internal: (requestId) => checkErrorResponse(new CheckError(500, "server_error", `Internal error (request ${requestId})`)),
  rateLimited: (retryAfterSeconds) =>
    checkErrorResponse(new CheckError(429, "rate_limited", "Too many requests; retry after the time in Retry-After", { "Retry-After": String(retryAfterSeconds) })),
  notFound: notFoundResponse,
};
