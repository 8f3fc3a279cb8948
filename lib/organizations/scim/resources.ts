/**
 * What the SCIM endpoints share: the request being answered (`ScimCall`), a resource's `meta` and
 * its ETag (`W/"<version>"`, RFC 7644 §3.14), the If-Match and If-None-Match preconditions, list
 * responses with `startIndex` and `count` (§3.4.2.4), `attributes` and `excludedAttributes`
 * (§3.4.2.5), and the JSON body procedure.
 */
import type { EndpointContext } from "../../http/context";
import { BodyTooLarge, isUniqueViolation } from "../../http/errors";
import { inTransaction } from "../../http/transaction";
import { mediaType, readBody } from "../../http/form";
import { isStorableText } from "../../text";
import { isObject, LIST_SCHEMA } from "./attributes";
import type { DirectoryAccess } from "./directory";
import { badRequest, conflict, preconditionFailed, scimJson, tooLarge, unsupportedMediaType } from "./errors";

export interface ScimCall {
  request: Request;
  ctx: EndpointContext;
  access: DirectoryAccess;
  /** The directory's base URL: `{issuer}/scim/v2/o/{organization}`. */
  base: string;
  now: Date;
}

/** The largest body a SCIM request may have. */
export const SCIM_BODY_LIMIT = 256 * 1024;

/** The page size when `count` is absent, and the largest one served (ServiceProviderConfig's `filter.maxResults`). */
export const DEFAULT_COUNT = 100;
export const MAX_COUNT = 200;

export const etagOf = (version: number) => `W/"${version}"`;

export function meta(resourceType: "User" | "Group", location: string, row: { createdAt: Date; updatedAt: Date; version: number }) {
  return { resourceType, created: row.createdAt.toISOString(), lastModified: row.updatedAt.toISOString(), location, version: etagOf(row.version) };
}

/** Refuses a change whose If-Match names another version (412). `*` matches any. */
export function checkIfMatch(request: Request, version: number): void {
  const header = request.headers.get("if-match");
  if (header === null) return;
  const tags = header.split(",").map((t) => t.trim());
  if (tags.includes("*") || tags.some((t) => t.replace(/^W\//, "") === `"${version}"`)) return;
  throw preconditionFailed();
}

/** Whether a GET's If-None-Match names the current version (answered 304). */
export function notModified(request: Request, version: number): boolean {
  const header = request.headers.get("if-none-match");
  if (header === null) return false;
  return header.split(",").some((t) => t.trim() === "*" || t.trim().replace(/^W\//, "") === `"${version}"`);
}

/** A GET's answer when If-None-Match names the current version (304), else null. */
export function notModifiedAnswer(request: Request, version: number): Response | null {
  return notModified(request, version) ? new Response(null, { status: 304, headers: { ETag: etagOf(version) } }) : null;
}

/**
 * Runs a change in one transaction; a unique key a concurrent request took first is a 409 with
 * `detail`, as if the request had seen it.
 */
export async function inScimTransaction<T>(call: ScimCall, detail: string, work: (ctx: EndpointContext) => Promise<T>): Promise<T> {
  try {
    return await inTransaction(call.ctx, work);
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(detail);
    throw error;
  }
}

/**
 * A list's page and total (`startIndex`, `count`): the two statements at once; no rows are read
 * for `count=0`.
 */
export async function listed<R>(query: URLSearchParams, total: () => Promise<{ total: number }[]>, rows: (offset: number, limit: number) => Promise<R[]>): Promise<{ rows: R[]; total: number; offset: number }> {
  const { offset, count } = pageOf(query);
  const [[counted], page] = await Promise.all([total(), count === 0 ? Promise.resolve([] as R[]) : rows(offset, count)]);
  return { rows: page, total: Number(counted.total), offset };
}

/** A resource answer with its ETag and, for a creation, its Location. */
export function resourceResponse(resource: { meta: { location: string; version: string } }, status = 200): Response {
  return scimJson(resource, status, { ETag: resource.meta.version, ...(status === 201 ? { Location: resource.meta.location } : {}) });
}

/** The JSON body of a POST, PUT or PATCH: `application/scim+json` or `application/json`, an object, at most SCIM_BODY_LIMIT bytes. */
export async function readScimBody(request: Request): Promise<Record<string, unknown>> {
  const type = mediaType(request);
  if (type !== "application/scim+json" && type !== "application/json") throw unsupportedMediaType();
  let text: string;
  try {
    text = await readBody(request, SCIM_BODY_LIMIT);
  } catch (error) {
    if (error instanceof BodyTooLarge) throw tooLarge(SCIM_BODY_LIMIT);
    throw error;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest("invalidSyntax", "The body is not valid JSON");
  }
  if (!isObject(body)) throw badRequest("invalidSyntax", "The body must be a JSON object");
  if (!storable(body)) throw badRequest("invalidValue", "The body contains a character that is not accepted (U+0000, or half a surrogate pair)");
  return body;
}

/** Whether every string of a JSON value, names included, is text the database can store (lib/text.ts). */
function storable(value: unknown): boolean {
  if (typeof value === "string") return isStorableText(value);
  if (Array.isArray(value)) return value.every(storable);
  if (isObject(value)) return Object.entries(value).every(([k, v]) => isStorableText(k) && storable(v));
  return true;
}

/** `startIndex` and `count` (RFC 7644 §3.4.2.4): 1-based; below 1 is 1; `count` at most MAX_COUNT, 0 asks only for the total. */
export function pageOf(query: URLSearchParams): { offset: number; count: number } {
  const number = (name: string, fallback: number) => {
    const raw = query.get(name);
    if (raw === null || raw === "") return fallback;
    if (!/^-?[0-9]{1,9}$/.test(raw)) throw badRequest("invalidValue", `${name} must be an integer`);
    return Number(raw);
  };
  const startIndex = Math.max(1, number("startIndex", 1));
  const count = Math.min(MAX_COUNT, Math.max(0, number("count", DEFAULT_COUNT)));
  return { offset: startIndex - 1, count };
}

export function listResponse(resources: unknown[], total: number, offset: number): Response {
  return scimJson({ schemas: [LIST_SCHEMA], totalResults: total, startIndex: offset + 1, itemsPerPage: resources.length, Resources: resources });
}

/** Attributes always returned whatever `attributes` and `excludedAttributes` say. */
const ALWAYS = new Set(["id", "schemas", "meta"]);

/** The names in `attributes` / `excludedAttributes` (top-level, lower-cased); null when absent. */
function namesOf(query: URLSearchParams, name: string): Set<string> | null {
  const raw = query.get(name);
  if (raw === null || raw.trim() === "") return null;
  return new Set(raw.split(",").map((a) => a.trim().toLowerCase().replace(/^urn:ietf:params:scim:schemas:core:2\.0:(user|group):/, "").split(".")[0]));
}

/** What of each resource a list or a GET returns (`attributes` wins over `excludedAttributes`). */
export function projection(query: URLSearchParams): { wants(name: string): boolean; project<T extends Record<string, unknown>>(resource: T): Partial<T> } {
  const only = namesOf(query, "attributes");
  const excluded = namesOf(query, "excludedAttributes");
  const wants = (name: string) => {
    const lower = name.toLowerCase();
    if (ALWAYS.has(lower)) return true;
    if (only) return only.has(lower);
    return !excluded?.has(lower);
  };
  return {
    wants,
    project: (resource) => (only || excluded ? (Object.fromEntries(Object.entries(resource).filter(([k]) => wants(k))) as typeof resource) : resource),
  };
}
