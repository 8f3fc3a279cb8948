/** The callback as the protocols consume it, and the asserted claims turned into an UpstreamIdentity. */
import type { UpstreamIdentity } from "./contract";

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
