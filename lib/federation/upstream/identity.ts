/** The callback as the protocols consume it, and the asserted claims turned into an UpstreamIdentity. */
import type { ReceivedAttribute, UpstreamIdentity } from "./contract";

export interface CallbackInput {
  /** The authorization response on the registered redirect URI (query or form-posted parameters). */
  response: URL;
  expected: { state: string; nonce: string | null; codeVerifier: string | null };
  /** Apple's form-posted `user` name (first sign-in only; unsigned, so used for the name alone). */
  appleName: string | null;
}

const MAX_EMAIL = 320;
const MAX_NAME = 200;

function text(value: unknown, max: number): string | null {
  if (typeof value !== "string") return null;
  const trimmed = value.trim();
  return trimmed ? trimmed.slice(0, max) : null;
}

/**
 * The identity from verified claims. `email_verified` counts only when it is the JSON value
 * `true` (never the string "true"), and only for the email it came with.
 */
export function identityClaims(input: { issuer: string; subject: string; profile: Record<string, unknown>; fallbackName: string | null; amr: unknown; acr: unknown }): UpstreamIdentity {
  const email = typeof input.profile.email === "string" && input.profile.email.length <= MAX_EMAIL && input.profile.email.includes("@") ? input.profile.email : null;
  return {
    issuer: input.issuer,
    subject: input.subject,
    email,
    emailVerified: email !== null && input.profile.email_verified === true,
    name: text(input.profile.name, MAX_NAME) ?? text(input.fallbackName, MAX_NAME),
    amr: Array.isArray(input.amr) ? input.amr.filter((v): v is string => typeof v === "string") : [],
    acr: typeof input.acr === "string" ? input.acr : null,
  };
}

/** At most this many attributes, values per attribute and characters per value are kept of what an upstream sent. */
export const RECEIVED_LIMITS = { attributes: 100, values: 20, characters: 1_000 } as const;

function asText(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
  return text.length > RECEIVED_LIMITS.characters ? `${text.slice(0, RECEIVED_LIMITS.characters)}…` : text;
}

/**
 * What an upstream sent, attribute by attribute, as text: a string as it is, anything else as JSON
 * (an array's elements each one value). Bounded by RECEIVED_LIMITS, so a large assertion or token
 * cannot make the page (or the round trip) large.
 */
export function receivedOf(source: string, entries: Iterable<[string, unknown]>): ReceivedAttribute[] {
  const received: ReceivedAttribute[] = [];
  for (const [name, value] of entries) {
    if (received.length >= RECEIVED_LIMITS.attributes) break;
    if (value === undefined) continue;
    const values = (Array.isArray(value) ? value : [value]).slice(0, RECEIVED_LIMITS.values).map(asText);
    received.push({ source, name: asText(name), values });
  }
  return received;
}
