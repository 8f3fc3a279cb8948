/**
 * The public documents (discovery and its RFC 8414 twin, JWKS) as bytes built once per
 * configuration: a document is built from the database the first time it is asked for, kept in
 * the process's cache (lib/service.ts, "Caches and changes": dropped at once when its workspace
 * changes, here or in another process) and answered from there, with a strong ETag computed once
 * from its bytes, and 304 for a request that already holds them (RFC 9110 §8.8.3, §13.1.2).
 */
import { createHash } from "node:crypto";
import { lightResponse } from "../http/response";
import type { Service } from "../service";

/**
 * How long a built document is answered from memory at most: a change is heard of at once
 * (announced, lib/service.ts); this bounds it when the announcement is lost. No longer than the
 * active signing key is kept (keys.ts ACTIVE_KEY_TTL_MS), so JWKS and the key that signs agree.
 */
export const DOCUMENT_TTL_MS = 30_000;

/** A document's answer, built once. */
export interface BuiltDocument {
  /** The JSON body, exactly as answered. */
  readonly body: string;
  /** Strong: a hash of `body`, quoted. */
  readonly etag: string;
  readonly cacheControl: string;
  /** When it was built (`Date.now()`): answered until DOCUMENT_TTL_MS later. */
  readonly builtAt: number;
  /**
   * The service clock's time (ms) from which the document is out of date by itself, whatever is
   * written (a retired key leaving JWKS at its unpublishAt); Infinity when nothing expires.
   */
  readonly validUntil: number;
}

/** Encodes `document` once and hashes its bytes for the ETag. */
export function buildDocument(document: unknown, cacheControl: string, validUntil = Infinity): BuiltDocument {
  const body = JSON.stringify(document);
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 32)}"`;
  return { body, etag, cacheControl, builtAt: Date.now(), validUntil };
}

/** Whether `document` may still be answered. */
export function isCurrent(document: BuiltDocument, service: Pick<Service, "clock">): boolean {
  if (Date.now() - document.builtAt >= DOCUMENT_TTL_MS) return false;
  return document.validUntil === Infinity || service.clock.now().getTime() < document.validUntil;
}

/**
 * Whether an If-None-Match field value names `etag` (RFC 9110 §13.1.2): `*`, or a list of entity
 * tags one of which matches by the weak comparison (the opaque tags are equal, W/ or not).
 */
export function noneMatchHolds(field: string | null, etag: string): boolean {
  if (field === null) return false;
  if (field.trim() === "*") return true;
  // Each entity tag: an optional W/, then a quoted opaque tag (which holds no DQUOTE, but may hold commas).
  for (const match of field.matchAll(/(?:W\/)?("[^"]*")/g)) if (match[1] === etag) return true;
  return false;
}

/**
 * The answer for `document`: 304 with its ETag and caching (no body) when the request's
 * If-None-Match already names it, else 200 with the bytes. GET and HEAD alike (HEAD is GET
 * without the body: lib/server/router.ts).
 */
export function documentResponse(request: Request, document: BuiltDocument): Response {
  if (noneMatchHolds(request.headers.get("if-none-match"), document.etag)) {
    return lightResponse(null, 304, { "Cache-Control": document.cacheControl, ETag: document.etag });
  }
  return lightResponse(document.body, 200, { "Content-Type": "application/json; charset=utf-8", "Cache-Control": document.cacheControl, ETag: document.etag });
}

/**
 * The built documents of one workspace that vary with the request (issuer, client_id), least
 * recently used out first past `limit`, so that no stream of requests grows it without bound.
 */
export class DocumentShelf {
  private readonly entries = new Map<string, BuiltDocument>();

  constructor(private readonly limit: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string, service: Pick<Service, "clock">): BuiltDocument | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (!isCurrent(entry, service)) return undefined;
    // Re-inserted so that Map order is recency order.
    this.entries.set(key, entry);
    return entry;
  }

  set(key: string, document: BuiltDocument): void {
    this.entries.delete(key);
    this.entries.set(key, document);
    while (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value!);
  }
}
