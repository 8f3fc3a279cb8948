/**
 * The one CSRF token: HMAC-SHA256, under the master key's subkey for `csrf:<purpose>`, of the
 * values the token is bound to (a workspace, a transaction, a browser-binding cookie, a session).
 * A page renders it into its form; the post must carry it back, and it verifies only for the same
 * purpose and the same values, compared in constant time. The values are length-prefixed, so no
 * two different lists share a token (["a.b", "c"] is not ["a", "b.c"]).
 *
 * A binding value should include one the attacker cannot read or set, such as an HttpOnly cookie
 * of the browser: a token is then useless in any other browser.
 */
import { deriveKey, hmacBase64Url, safeEqual } from "../crypto";

/** Purposes in use; each is its own key, so a token for one never verifies for another. */
export type CsrfPurpose = "hosted-sign-in" | "account-portal" | "device-authorization" | "organization-invitation" | "organization-portal";

function encode(bindings: readonly string[]): string {
  return bindings.map((value) => `${value.length}:${value}`).join("");
}

export function csrfToken(masterKey: Buffer, purpose: CsrfPurpose, bindings: readonly string[]): string {
  return hmacBase64Url(deriveKey(masterKey, `csrf:${purpose}`), encode(bindings));
}

/** Whether `presented` is the token for exactly this purpose and these values. */
export function verifyCsrfToken(masterKey: Buffer, purpose: CsrfPurpose, bindings: readonly string[], presented: string | null | undefined): boolean {
  return typeof presented === "string" && presented.length > 0 && safeEqual(presented, csrfToken(masterKey, purpose, bindings));
}
