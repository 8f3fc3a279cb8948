import { BodyTooLarge } from "../http/errors";
import { mediaType, readBody, unstorableParameter } from "../http/form";
import { invalidRequest, payloadTooLarge, unsupportedMediaType, unstorableText } from "./errors";

export const OAUTH_BODY_LIMIT = 8 * 1024;

/**
 * Parses an OAuth form body: the right media type, at most 8 KiB, no duplicated parameter, and
 * only the names in `allowed` (when given). Empty values count as absent, as RFC 6749 says.
 * Every name and value is text the database can store.
 */
export async function readOAuthForm(request: Request, allowed?: ReadonlySet<string>): Promise<Map<string, string>> {
  if (mediaType(request) !== "application/x-www-form-urlencoded") throw unsupportedMediaType("application/x-www-form-urlencoded");
  let body: string;
  try {
    body = await readBody(request, OAUTH_BODY_LIMIT);
  } catch (error) {
    throw error instanceof BodyTooLarge ? payloadTooLarge() : error;
  }
  return parseParams(new URLSearchParams(body), allowed);
}

export function parseParams(params: URLSearchParams, allowed?: ReadonlySet<string>): Map<string, string> {
  if (unstorableParameter(params) !== null) throw unstorableText();
  const out = new Map<string, string>();
  const seen = new Set<string>();
  for (const [name, value] of params) {
    if (seen.has(name)) throw invalidRequest(`Parameter ${name} is duplicated`);
    seen.add(name);
    if (allowed && !allowed.has(name)) throw invalidRequest(`Parameter ${name} is not recognized`);
    if (value !== "") out.set(name, value);
  }
  return out;
}
