/**
 * The one session-token format, for hosted sessions, console sessions and (next) portal sessions:
 * Lucia / Copenhagen style. A token is `<id>.<secret>`: a random id (16 bytes) to find the row and
 * a random secret (32 bytes) of which only the SHA-256 is stored and compared in constant time, so
 * a database dump names sessions but opens none. The idle expiry slides with use, at most once a
 * minute (sliding is a write), and never beyond the absolute expiry.
 */
import { MINUTE } from "../clock";
import { randomToken, safeEqual, sha256Hex } from "../crypto";
import { isStorableText } from "../text";

export interface NewSessionToken {
  id: string;
  secret: string;
  /** The cookie value, `<id>.<secret>`. */
  token: string;
  /** What the row stores instead of the secret. */
  secretHash: string;
}

/** Sliding the idle expiry is a write: at most once a minute per session. */
export const SLIDE_AFTER_MS = MINUTE;

export function sessionSecretHash(secret: string): string {
  return sha256Hex(secret);
}

/** A new token; with `id`, a new secret for an existing session (rotation). */
export function newSessionToken(id: string = randomToken(16)): NewSessionToken {
  const secret = randomToken(32);
  return { id, secret, token: `${id}.${secret}`, secretHash: sessionSecretHash(secret) };
}

/**
 * The id and secret of a presented token; null unless both are non-empty and the text is
 * storable (a NUL would make the id lookup fail in the database instead of finding nothing).
 */
export function parseSessionToken(raw: string | null | undefined): { id: string; secret: string } | null {
  if (!raw || !isStorableText(raw)) return null;
  const dot = raw.indexOf(".");
  if (dot < 1 || dot === raw.length - 1) return null;
  return { id: raw.slice(0, dot), secret: raw.slice(dot + 1) };
}

/** Whether `secret` is the one whose hash the row stores, compared in constant time. */
export function verifySessionSecret(row: { secretHash: string }, secret: string): boolean {
  return safeEqual(row.secretHash, sessionSecretHash(secret));
}

/** The idle expiry from `now`: `idleMs` ahead, never beyond the absolute expiry. */
export function idleExpiryFrom(now: Date, idleMs: number, absoluteExpiresAt: Date): Date {
  return new Date(Math.min(now.getTime() + idleMs, absoluteExpiresAt.getTime()));
}

/**
 * The new idle expiry of a live session used at `now`, or null when it was last slid less than a
 * minute ago (nothing to write).
 */
export function slideIdleExpiry(row: { lastSeenAt: Date; absoluteExpiresAt: Date }, now: Date, idleMs: number): Date | null {
  if (now.getTime() - row.lastSeenAt.getTime() <= SLIDE_AFTER_MS) return null;
  return idleExpiryFrom(now, idleMs, row.absoluteExpiresAt);
}
