/**
 * The contract every sign-in factor follows (one module per factor in this folder):
 *
 *   enroll    → create the factor for a user, completed only with a proof that it works
 *               (a TOTP code, a WebAuthn attestation); not every factor is enrolled (password,
 *               email code: the account's own);
 *   challenge → issue what the user must answer (an email code, a WebAuthn challenge), stored
 *               server-side, bound to what it is for (a pending sign-in), short-lived, single use;
 *   verify    → check the answer once (atomically consumed) and return the evidence record
 *               (lib/authn/evidence.ts `evidenceFor`) the sign-in adds to what the user proved.
 *
 * Failures are values, not exceptions: a factor answers `{ ok: false, reason }` and the caller
 * turns the reason into the page's message (lib/hosted/errors.ts). A limited attempt answers
 * like a wrong one (`invalid`), so no page tells a guesser more than a wrong answer would.
 */
import type { Evidence, EvidenceMethod } from "../evidence";

/** What a challenge is bound to: the purpose and the id of the thing (a transaction id for a pending sign-in). */
export interface ChallengeBinding {
  purpose: "sign_in" | "sign_up" | "enroll" | "portal";
  bindingId: string;
}

export type VerifyFailure =
  /** Wrong, unknown, used, expired or rate-limited: the user is told only that it did not work. */
  | "invalid"
  /** The challenge is dead (expired, too many attempts, consumed): the user must ask for a new one. */
  | "expired"
  /** A WebAuthn credential whose counter went backwards: refused and flagged. */
  | "flagged";

export type VerifyResult = { ok: true; userId: string; evidence: Evidence } | { ok: false; reason: VerifyFailure };

/** One enrolled factor of a user, as the console and the portal list it. */
export interface EnrolledFactor {
  kind: Extract<EvidenceMethod, "passkey" | "security_key" | "totp" | "recovery_code">;
  /** The row id (for recovery codes: the user's set, named by the user id). */
  id: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** Recovery codes: how many are unused. */
  remaining?: number;
  /** A WebAuthn credential refused after its counter went backwards. */
  flagged?: boolean;
}
