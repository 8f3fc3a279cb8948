import { invalidRequest, payloadTooLarge, unsupportedMediaType, unstorableText } from "./errors";
import { isStorableText } from "./text";

export const OAUTH_BODY_LIMIT = 8 * 1024;

/** Reads at most `limit` bytes; a longer body is refused without buffering the rest. */
export async function readBody(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw payloadTooLarge();
  if (declared !== null && /^[0-9]+$/.test(declared)) {
    // A declared length bounds what the HTTP parser lets through: read it whole (the production
    // listener already has it in memory), then check what arrived.
    const bytes = await request.arrayBuffer();
    if (bytes.byteLength > limit) throw payloadTooLarge();
    return Buffer.from(bytes).toString("utf8");
  }
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw payloadTooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export function mediaType(request: Request): string {
  return (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
}

/**
 * Parses an OAuth form body: the right media type, at most 8 KiB, no duplicated parameter, and
 * only the names in `allowed` (when given). Empty values count as absent, as RFC 6749 says.
 * Every name and value is text the database can store.
 */
export async function readOAuthForm(request: Request, allowed?: ReadonlySet<string>): Promise<Map<string, string>> {
  if (mediaType(request) !== "application/x-www-form-urlencoded") throw unsupportedMediaType("application/x-www-form-urlencoded");
  const body = await readBody(request, OAUTH_BODY_LIMIT);
  return parseParams(new URLSearchParams(body), allowed);
}

/** The first parameter, by name, whose name or value the database could not store; null when none. */
export function unstorableParameter(params: URLSearchParams): string | null {
  for (const [name, value] of params) if (!isStorableText(name) || !isStorableText(value)) return name;
  return null;
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
