import { codedRule, CodedError, failureResponse, json, type ErrorFamily } from "../http/errors";
import { hostedError } from "../hosted/errors";

/** An OAuth boundary error: status, `error` code, description, and whether it may reach the client. */
export class OAuthError extends CodedError {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
    readonly options: { redirectable?: boolean; headers?: Record<string, string> } = {},
  ) {
    super(error, `${error}: ${description}`, { status, family: "oauth", description, headers: options.headers });
  }
}

export const invalidRequest = (description: string) => new OAuthError(400, "invalid_request", description, { redirectable: true });
export const invalidScope = (description: string) => new OAuthError(400, "invalid_scope", description, { redirectable: true });
export const invalidGrant = (description: string) => new OAuthError(400, "invalid_grant", description);
export const invalidClient = (description: string, basic: boolean) =>
  new OAuthError(401, "invalid_client", description, {
    headers: { "WWW-Authenticate": basic ? 'Basic realm="latchkey", charset="UTF-8"' : 'Basic realm="latchkey"' },
  });
export const unsupportedGrantType = (description: string) => new OAuthError(400, "unsupported_grant_type", description);
export const payloadTooLarge = () => new OAuthError(413, "invalid_request", "Request body too large");
export const unsupportedMediaType = (expected: string) => new OAuthError(415, "invalid_request", `Content-Type must be ${expected}`);
/** Authority could not be confirmed (database or dependency failure): deny, never allow. */
export const unavailable = () =>
  new OAuthError(503, "temporarily_unavailable", "Authority cannot be confirmed right now; try again later", {
    headers: { "Retry-After": "5" },
  });
export const notFound = () => new OAuthError(404, "invalid_request", "Not found");
/** Text the database cannot hold (see lib/text.ts): a bad field, never a 500. */
export const unstorableText = (what = "A parameter") => new OAuthError(400, "invalid_request", `${what} contains a character that is not accepted (U+0000)`);

/** A coded error of the OAuth vocabulary as RFC 6749's JSON body. */
export function oauthErrorResponse(error: CodedError): Response {
  return json({ error: error.code, error_description: error.description }, error.status, error.headers);
}

/** The generic 404 of every unresolved workspace, client or route: indistinguishable by design. */
export function notFoundResponse(): Response {
  return oauthErrorResponse(notFound());
}

const rateLimited = (retryAfterSeconds: number) =>
  new OAuthError(429, "rate_limited", "Too many requests; retry after the time in Retry-After", { headers: { "Retry-After": String(retryAfterSeconds) } });

/** The OAuth boundary's error family: the JSON error body of RFC 6749. */
export const oauthFailures: ErrorFamily = {
  name: "oauth",
  rule: codedRule("oauth", oauthErrorResponse),
  unstorable: () => oauthErrorResponse(unstorableText()),
  unavailable: () => oauthErrorResponse(unavailable()),
  internal: (requestId) => json({ error: "server_error", error_description: `Internal error (request ${requestId})` }, 500),
  rateLimited: (retryAfterSeconds) => oauthErrorResponse(rateLimited(retryAfterSeconds)),
  notFound: notFoundResponse,
};

/**
 * The browser routes' family (authorize, logout, the hosted sign-in's posts): hosted pages for
 * unstorable text, a dependency failure and a limit; an OAuth rule error and a 500 as the OAuth
 * boundary answers them.
 */
export const hostedFailures: ErrorFamily = {
  ...oauthFailures,
  name: "hosted",
  unstorable: () => hostedError("unstorable_request"),
  unavailable: () => {
    const page = hostedError("temporarily_unavailable");
    page.headers.set("Retry-After", "5");
    return page;
  },
  rateLimited: (retryAfterSeconds) => {
    const page = hostedError("too_many_requests");
    page.headers.set("Retry-After", String(retryAfterSeconds));
    return page;
  },
};

/** The OAuth family's answer to any failure (lib/http/errors.ts `failureResponse`). */
export function errorToResponse(error: unknown): Response {
  return failureResponse(oauthFailures, error);
}
