/**
 * How the upstream code reaches other servers and turns every failure into a FederationError:
 * one fetch wrapper (time limit, redirects never followed, unreachable and 5xx marked), the URL
 * policy (https, or http on loopback only), and the mapping of openid-client's errors to the
 * contract's codes. The requests themselves go through `Service.fetch` (lib/outbound/fetch.ts):
 * public addresses only, checked after name resolution, answers bounded in size; a refused
 * destination is the provider's misconfiguration, named in the error's message.
 */
import * as client from "openid-client";
import { isLoopbackHost } from "../../config";
import { OutboundRefused } from "../../outbound/fetch";
import { causes } from "../../http/errors";
import { FederationError, type UpstreamCall } from "./contract";

/** Each upstream call gets this long before it counts as unavailable. */
export const UPSTREAM_TIMEOUT_MS = 10_000;

/** Why a call never produced a usable answer: kept as the FederationError's cause chain marker. */
class UpstreamUnreachable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "UpstreamUnreachable";
  }
}

/** Whether `url` is plain http to this machine (allowed for development and tests only). */
export function isLoopbackHttp(url: URL): boolean {
  return url.protocol === "http:" && isLoopbackHost(url.hostname);
}

/** An upstream URL setting: https anywhere, http only on loopback; anything else is misconfigured. */
export function upstreamUrl(value: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch (cause) {
    throw new FederationError("misconfigured", `The ${what} is not a URL`, { cause });
  }
  if (url.protocol === "https:" || isLoopbackHttp(url)) return url;
  throw new FederationError("misconfigured", `The ${what} must use https (http only on a loopback host): ${url.origin}`);
}

/**
 * `call.fetch` with a time limit and redirects left unfollowed (a redirect is the caller's answer,
 * never a second request), where a connection failure, a time-out or a 5xx answer becomes an
 * UpstreamUnreachable (openid-client wraps it; `toFederationError` finds it in the causes) and a
 * refused destination stays an OutboundRefused (misconfigured).
 */
export function guardedFetch(call: UpstreamCall): client.CustomFetch {
  return async (url, options) => {
    const limit = AbortSignal.timeout(UPSTREAM_TIMEOUT_MS);
    const signal = options.signal ? AbortSignal.any([options.signal, limit]) : limit;
    let response: Response;
    try {
      response = await call.fetch(url, { ...options, redirect: "manual", signal } as RequestInit);
    } catch (cause) {
      if (cause instanceof OutboundRefused) throw cause;
      throw new UpstreamUnreachable(`The upstream at ${new URL(url).origin} could not be reached`, { cause });
    }
    if (response.status >= 500) {
      await response.body?.cancel().catch(() => undefined);
      throw new UpstreamUnreachable(`The upstream at ${new URL(url).origin} answered ${response.status}`);
    }
    return response;
  };
}

/** The GET the GitHub API calls make (same wrapper, plain fetch options). */
export async function guardedGet(call: UpstreamCall, url: URL, headers: Record<string, string>): Promise<Response> {
  return guardedFetch(call)(url.href, { method: "GET", headers, body: undefined, redirect: "manual" });
}

/** The refused destination or bound behind a failure (lib/outbound), if one is: its message names hosts and origins only, never a path or query. */
export function outboundRefusalOf(error: unknown): OutboundRefused | undefined {
  return causes(error).find((e): e is OutboundRefused => e instanceof OutboundRefused);
}

/**
 * Any error of a round trip as a FederationError (the original kept as `cause`): unreachable,
 * timed out or 5xx → upstream_unavailable; the user sent back with `error` → upstream_denied;
 * http or a non-public address refused → misconfigured; an answer over the size bound and
 * everything else that failed verification → invalid_response.
 */
export function toFederationError(error: unknown, context: string): FederationError {
  if (error instanceof FederationError) return error;
  const chain = causes(error);
  const refused = outboundRefusalOf(error);
  if (refused) return new FederationError(refused.reason === "too-large" ? "invalid_response" : "misconfigured", `${context}: ${refused.message}`, { cause: error });
  if (chain.some((e) => e instanceof UpstreamUnreachable)) return new FederationError("upstream_unavailable", `${context}: the upstream is unavailable`, { cause: error });
  if (error instanceof client.AuthorizationResponseError) {
    return new FederationError("upstream_denied", `${context}: the upstream answered ${error.error}`, { cause: error });
  }
  if (error instanceof client.ResponseBodyError && error.status >= 500) {
    return new FederationError("upstream_unavailable", `${context}: the upstream answered ${error.status}`, { cause: error });
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "OAUTH_TIMEOUT" || code === "OAUTH_ABORT") return new FederationError("upstream_unavailable", `${context}: the upstream timed out`, { cause: error });
  if (code === "OAUTH_HTTP_REQUEST_FORBIDDEN" || code === "OAUTH_REQUEST_PROTOCOL_FORBIDDEN") {
    return new FederationError("misconfigured", `${context}: the upstream uses an endpoint that is not https`, { cause: error });
  }
  const detail = error instanceof Error ? error.message : "unexpected failure";
  return new FederationError("invalid_response", `${context}: ${detail}`, { cause: error });
}
