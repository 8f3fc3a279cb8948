import { randomUUID } from "node:crypto";

/** The header that names a request, in the request (a proxy's or client's) and in the answer. */
export const REQUEST_ID_HEADER = "x-request-id";

/** What an incoming id may look like to be kept: a short token, nothing a log line could be split or forged with. */
const ACCEPTED = /^[A-Za-z0-9._:-]{1,128}$/;

/** Between the id a request came with and the server's own; never part of an accepted incoming id. */
const REQUEST_ID_SEPARATOR = "~";

/**
 * The request's id: the server's own (a new UUID), after the `X-Request-Id` the request came with
 * (from a proxy or the client) when that is a short token, as `<incoming>~<own>`. The server's
 * part makes every id unique in the log, whatever a client sends (another request's id
 * included); the incoming part still finds a proxy's id there. The listener stamps it on the
 * request and the answer, so a log line and a client's report name the same request.
 */
export function requestIdOf(incoming: string | string[] | undefined): string {
  const own = randomUUID();
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value !== undefined && ACCEPTED.test(value) ? `${value}${REQUEST_ID_SEPARATOR}${own}` : own;
}
