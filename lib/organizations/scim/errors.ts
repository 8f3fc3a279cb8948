/**
 * SCIM's error shape (RFC 7644 §3.12): every refusal of the SCIM endpoints is an error resource,
 * `{ schemas: [Error], status: "<code>", scimType?, detail }` as `application/scim+json`, and so
 * is every failure outside the endpoint (rate limit, the database unavailable, an unknown
 * workspace): the route's error family below.
 */
import { CodedError } from "../../coded-error";
import { codedRule, type ErrorFamily } from "../../http/errors";
import { lightResponse } from "../../http/response";

export const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";
export const SCIM_CONTENT_TYPE = "application/scim+json; charset=utf-8";

/** RFC 7644 Table 9's scimType values this service answers with. */
export type ScimType =
  | "invalidFilter"
  | "tooMany"
  | "uniqueness"
  | "mutability"
  | "invalidSyntax"
  | "invalidPath"
  | "noTarget"
  | "invalidValue"
  | "invalidVers"
  | "sensitive";

/** A SCIM refusal: its HTTP status, its scimType (only 400 and 409 carry one) and the detail a person reads. */
export class ScimError extends CodedError<string> {
  constructor(
    status: number,
    readonly scimType: ScimType | null,
    detail: string,
    headers: Record<string, string> = {},
  ) {
    super(scimType ?? `status_${status}`, detail, { status, family: "scim", description: detail, headers });
    this.name = "ScimError";
  }
}

export const badRequest = (scimType: ScimType, detail: string) => new ScimError(400, scimType, detail);
export const notFound = (detail = "No such resource") => new ScimError(404, null, detail);
export const conflict = (detail: string) => new ScimError(409, "uniqueness", detail);
export const unauthorized = () =>
  new ScimError(401, null, "The bearer token is missing, revoked or expired, or it is not this organization's", { "WWW-Authenticate": 'Bearer realm="scim"' });
export const preconditionFailed = () => new ScimError(412, null, "The resource changed: its version is not the one in If-Match");
export const methodNotAllowed = (allow: string) => new ScimError(405, null, "This method is not supported here", { Allow: allow });
export const tooLarge = (limit: number) => new ScimError(413, null, `The body may be at most ${limit} bytes`);
export const unsupportedMediaType = () => new ScimError(415, null, "The body must be application/scim+json or application/json");

/** A JSON answer in SCIM's media type. */
export function scimJson(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return lightResponse(JSON.stringify(body), status, { "Content-Type": SCIM_CONTENT_TYPE, "Cache-Control": "no-store", ...headers });
}

export function scimErrorResponse(error: CodedError): Response {
  const scimType = error instanceof ScimError ? error.scimType : null;
  return scimJson({ schemas: [ERROR_SCHEMA], status: String(error.status), ...(scimType ? { scimType } : {}), detail: error.description }, error.status, error.headers);
}

const answer = (status: number, detail: string, headers: Record<string, string> = {}) => scimErrorResponse(new ScimError(status, null, detail, headers));

/** The SCIM routes' error family: every failure in SCIM's error shape. */
export const scimFailures: ErrorFamily = {
  name: "scim",
  rule: codedRule("scim", scimErrorResponse),
  unstorable: () => scimErrorResponse(badRequest("invalidValue", "The request contains a character that is not accepted (U+0000)")),
  unavailable: () => answer(503, "The directory cannot be reached right now; retry later", { "Retry-After": "5" }),
  internal: (requestId) => answer(500, `Internal error (request ${requestId})`),
  rateLimited: (retryAfterSeconds) => answer(429, "Too many requests; retry after the time in Retry-After", { "Retry-After": String(retryAfterSeconds) }),
  notFound: () => answer(404, "No such resource"),
};
