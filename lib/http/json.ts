/**
 * JSON request bodies of the machine-facing endpoints that take JSON (the permission check, the
 * account-security handoff): the body procedure and its rule for duplicate member names, written once.
 */
import { BodyTooLarge } from "./errors";
import { mediaType, readBody } from "./form";

/** How one endpoint words the body procedure's refusals: rule errors of its own family. */
export interface JsonBodyRefusals {
  /** The Content-Type is not application/json (415). */
  unsupportedMediaType(): Error;
  /** The body is over the limit (413). */
  tooLarge(limit: number): Error;
  /** Not JSON, not an object, or not exactly the members (400). */
  badRequest(description: string): Error;
}

/**
 * The JSON-object body procedure: `application/json`, at most `limit` bytes, valid JSON, an
 * object (not an array, not null), with exactly `members`, each once (a duplicate name that
 * JSON.parse would hide is refused). Each refusal is thrown as the endpoint's own rule error;
 * `membersDescription` is the endpoint's wording of the members rule.
 */
export async function readJsonObject(
  request: Request,
  rule: { limit: number; members: readonly string[]; membersDescription: string; refuse: JsonBodyRefusals },
): Promise<Record<string, unknown>> {
  if (mediaType(request) !== "application/json") throw rule.refuse.unsupportedMediaType();
  let text: string;
  try {
    text = await readBody(request, rule.limit);
  } catch (error) {
    if (error instanceof BodyTooLarge) throw rule.refuse.tooLarge(rule.limit);
    throw error;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw rule.refuse.badRequest("The body is not valid JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw rule.refuse.badRequest("The body must be a JSON object");
  if (!hasExactlyMembers(text, rule.members)) throw rule.refuse.badRequest(rule.membersDescription);
  return body as Record<string, unknown>;
}

/**
 * The member names of the top-level object exactly as written, duplicates included: JSON.parse
 * silently keeps the last of two equal names. `text` must already be valid JSON.
 */
function topLevelMemberNames(text: string): string[] {
  const names: string[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (depth === 1) {
        let k = j + 1;
        while (k < text.length && " \t\n\r".includes(text[k])) k++;
        if (text[k] === ":") names.push(JSON.parse(text.slice(i, j + 1)) as string);
      }
      i = j;
    } else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
  }
  return names;
}

/** Whether `text`'s top-level object has exactly `members`, each once (order free). `text` must be valid JSON. */
function hasExactlyMembers(text: string, members: readonly string[]): boolean {
  const names = topLevelMemberNames(text).sort();
  const expected = [...members].sort();
  return names.length === expected.length && names.every((name, i) => name === expected[i]);
}
