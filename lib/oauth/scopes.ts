export const IDENTITY_SCOPES = ["openid", "email", "profile", "offline_access"] as const;
export type IdentityScope = (typeof IDENTITY_SCOPES)[number];
const identity = new Set<string>(IDENTITY_SCOPES);

export const MAX_AUTHORIZE_SCOPES = 68;
export const MAX_M2M_SCOPES = 64;

export function isIdentityScope(scope: string): scope is IdentityScope {
  return identity.has(scope);
}

/** Scope tokens per RFC 6749 §3.3: printable ASCII except space, quote and backslash. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** Splits on single spaces; null when the value is malformed (empty token, bad character). */
export function splitScope(value: string): string[] | null {
  const parts = value.split(" ");
  if (parts.some((p) => !SCOPE_TOKEN.test(p))) return null;
  return parts;
}

export function hasDuplicates(values: string[]): boolean {
  return new Set(values).size !== values.length;
}

export function joinScope(values: Iterable<string>): string {
  return [...values].join(" ");
}
