import { lightResponse } from "./response";

/** An OAuth boundary error: status, `error` code, description, and whether it may reach the client. */
export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
    readonly options: { redirectable?: boolean; headers?: Record<string, string> } = {},
  ) {
    super(`${error}: ${description}`);
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

/** JSON response; `Cache-Control: no-store` unless the caller sets its own caching. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  const caching: Record<string, string> = "Cache-Control" in headers ? {} : { "Cache-Control": "no-store", Pragma: "no-cache" };
  return lightResponse(JSON.stringify(body), status, { "Content-Type": "application/json; charset=utf-8", ...caching, ...headers });
}

export function oauthErrorResponse(error: OAuthError): Response {
  return json({ error: error.error, error_description: error.description }, error.status, error.options.headers ?? {});
}

/** The generic 404 of every unresolved workspace, client or route: indistinguishable by design. */
export function notFoundResponse(): Response {
  return oauthErrorResponse(notFound());
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN",
  "CONNECT_TIMEOUT", "CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED",
]);

/**
 * Database and network failures (as opposed to rule violations): these become 503, never a
 * denial that looks final. Drivers wrap the socket error, so the whole `cause` chain is read.
 */
export function isDependencyFailure(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof OAuthError) return false;
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") {
      if (NETWORK_CODES.has(code)) return true;
      // PostgreSQL classes 08 (connection), 53 (resources), 57 (operator intervention: shutdown), 58 (system).
      if (/^(08|53|57|58)[0-9A-Z]{3}$/.test(code)) return true;
    }
    if (/PGlite is closed|Connection terminated|connect ECONNREFUSED|write after end/i.test(e.message)) return true;
  }
  return false;
}

/** Last-resort mapping: rule errors keep their status; anything else is 503 (dependency) or a bare 500. */
export function errorToResponse(error: unknown, requestId?: string): Response {
  if (error instanceof OAuthError) return oauthErrorResponse(error);
  if (isDependencyFailure(error)) {
    console.error(`[latchkey] dependency failure${requestId ? ` (${requestId})` : ""}:`, (error as Error).message);
    return oauthErrorResponse(unavailable());
  }
  const id = requestId ?? crypto.randomUUID();
  console.error(`[latchkey] internal error (${id}):`, error);
  return json({ error: "server_error", error_description: `Internal error (request ${id})` }, 500);
}
