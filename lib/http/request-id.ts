import { randomUUID } from "node:crypto";

/** The header that names a request, in the request (a proxy's or client's) and in the answer. */
export const REQUEST_ID_HEADER = "x-request-id";

/** What an incoming id may look like to be kept: a short token, nothing a log line could be split or forged with. */
const ACCEPTED = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request's id: the `X-Request-Id` it came with (from a proxy or the client) when it is a
 * short token, otherwise a new UUID. The listener stamps it on the request and the answer, so a
 * log line and a client's report name the same request.
 */
export function requestIdOf(incoming: string | string[] | undefined): string {
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value !== undefined && ACCEPTED.test(value) ? value : randomUUID();
}
