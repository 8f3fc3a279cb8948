/**
 * The shape of what a factor proves, declared once in each factor's folder (`<kind>/evidence.ts`)
 * and read by lib/authn/evidence.ts, which derives `auth_time`, `amr` and `acr` from it, and by
 * every rule that compares strengths (the portal's step-up, what makes a device known).
 */

/**
 * How hard the event is to steal or relay, weakest first (the order is the comparison):
 * - `knowledge`: a reusable secret the user types (a password), or a method whose factors
 *   Latchkey did not see (federation);
 * - `possession`: a one-time value from something the user holds (an email inbox, an authenticator
 *   app, a printed recovery code); still typed, so a phishing page can relay it;
 * - `phishing_resistant`: a WebAuthn signature, bound by the browser to our origin, which a
 *   look-alike site cannot obtain or relay.
 */
export const STRENGTHS = ["knowledge", "possession", "phishing_resistant"] as const;
export type Strength = (typeof STRENGTHS)[number];

/**
 * The NIST factor categories an event proves. A passkey is verified by the authenticator itself
 * (WebAuthn user verification, required for passkeys: a PIN or a biometric, so knowledge or
 * inherence; Latchkey cannot tell which, only that it is not possession), so one passkey is two
 * categories. A federated sign-in counts as one category, knowledge (what an upstream sign-in is
 * unless it says otherwise): an authenticator app or a passkey after it makes MFA, a password does
 * not. Only a connection that trusts its upstream's MFA records two (`federated_mfa`).
 */
export type FactorCategory = "knowledge" | "possession" | "user_verification";

/** The evidence one method yields: the same for every event of it. */
export interface EvidenceRule<M extends string = string> {
  /** The method recorded on the session (`Evidence.method`). */
  method: M;
  /** RFC 8176 values this event contributes to the token's `amr`. */
  amr: readonly string[];
  strength: Strength;
  categories: readonly FactorCategory[];
  /**
   * Whether the method establishes who the user is (it can open a session, and a re-entry of it
   * moves auth_time). The others only add to a session that already has a primary event.
   */
  primary: boolean;
}
