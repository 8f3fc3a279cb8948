/**
 * The contract every sign-in factor follows: one folder per factor (`<kind>/`), whose `index.ts`
 * exports one descriptor (`Factor`) that ./registry.ts lists, and which the sign-in, step-up, the
 * portal and the console read. A descriptor names its evidence (`<kind>/evidence.ts`), its declared
 * guessing limits, the audit events it writes, the hosted error codes it is shown as, and its
 * functions:
 *
 *   enroll    → create the factor for a user, completed only with a proof that it works
 *               (a TOTP code, a WebAuthn attestation); not every factor is enrolled (password,
 *               email code: the account's own); a completed enrolment is audited by the factor
 *               itself (`account_security.credential_added`), whichever flow enrols it;
 *   challenge → issue what the user must answer (an email code, a WebAuthn challenge), stored
 *               server-side, bound to what it is for (a pending sign-in), short-lived, single use;
 *   verify    → the factor's one verification, which the sign-in, step-up and the portal all call:
 *               its guessing gate, its account checks and its failure record are its own; it
 *               checks the answer once (atomically consumed) and returns the evidence record
 *               (lib/authn/evidence.ts `evidenceFor`) the caller adds to what the user proved;
 *   answer    → how the user answers it as a further factor, when that is a typed code (an
 *               authenticator app's, a recovery code): the sign-in's step and the portal's
 *               verification are then built for it (`TypedCodeAnswer`), routes included.
 *
 * Failures are values, not exceptions: a factor answers `{ ok: false, reason }` and the caller
 * turns the reason into the page's message (lib/hosted/errors.ts). A limited attempt answers
 * like a wrong one (`invalid`), so no page tells a guesser more than a wrong answer would.
 */
import type { Database } from "../../../db/client";
import type { AuditEventType } from "../../audit/catalogue";
import type { Evidence, EvidenceMethod } from "../evidence";
import type { SignInFormError } from "../../hosted/errors";
import type { EndpointContext } from "../../http/context";
import type { LocalizedText } from "../../i18n/locales";
import type { GuessingLimits } from "../../limits/declarations";
import type { EvidenceRule } from "./evidence-rule";

/** What a challenge is bound to: the purpose and the id of the thing (a transaction id for a pending sign-in). */
export interface ChallengeBinding {
  /**
   * What the challenge is for: `sign_in`, `sign_up`, `enroll`, `portal`, or the caller's own name
   * (a feature that proves a mailbox with a code declares it). Part of what a code answers, so a
   * challenge of one purpose never answers another.
   */
  purpose: string;
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
export interface EnrolledFactor<K extends EvidenceMethod = EvidenceMethod> {
  kind: K;
  /** The row id (for recovery codes: the user's set, named by the user id). */
  id: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** Recovery codes: how many are unused. */
  remaining?: number;
  /** A WebAuthn credential refused after its counter went backwards. */
  flagged?: boolean;
  /** A WebAuthn credential's RP ID: the hostname it works at (and, under related origins, that hostname's workspace's other hostnames). */
  rpId?: string;
}

/**
 * Where an enrolment happened, for its audit event: the enrolling user's client address, and what
 * it belongs to (`{ portal_session }` in the portal, `{ sign_in }` in the sign-in), added to the
 * event's data.
 */
export interface EnrolmentSource {
  ip: string | null;
  context: Record<string, string>;
}

type Ctx = Pick<EndpointContext, "service" | "workspace">;

/** A factor's function: each keeps its own parameters (a code, a WebAuthn response, a binding). */
type Operation = (...args: never[]) => Promise<unknown>;

/** What a user holds of a factor: listed by the console and the portal, removed by them. */
export interface HeldFactors<K extends EvidenceMethod> {
  list(ctx: Ctx, userId: string): Promise<EnrolledFactor<K>[]>;
  /** Which of `userIds` hold one (a usable one: confirmed, a code unused), by kind: the console's list of users. */
  holders(db: Database, workspaceId: string, userIds: string[]): Promise<{ userId: string; kind: K }[]>;
  /** Removes one (a recovery-code "factor" is the whole set); true when something was removed. */
  remove(ctx: Ctx, userId: string, kind: K, id: string): Promise<boolean>;
}

/**
 * A kind's part in the authentication policy: what it stands in for when MFA is asked (the
 * sign-in's second-factor step, lib/authn/policy.ts `nextStep`) and how the portal's step-up offers
 * it (lib/account-security/evidence.ts `verifyMethods`). Whether it identifies the user is its
 * evidence's `primary`; whichever role, only a kind that would make the evidence multi-factor is
 * offered in the sign-in.
 */
export interface FactorRole {
  /**
   * As a further factor, once the user is identified:
   * - `"enrolled"`: a second factor the user enrols (its factor's `enrollable`), offered when the
   *   user holds one. These are the user's second factors: the portal asks a user who holds one
   *   for MFA, and under a policy that requires MFA the last of them cannot be removed.
   * - `"backup"`: offered when the user holds one, only beside an `"enrolled"` kind, never alone
   *   (recovery codes stand in for a lost second factor): in the sign-in, beside any one offered;
   *   in the portal, beside one held that does not identify the user (a passkey verifies by itself
   *   there).
   * - `"first_factor"`: the account's own, offered in the sign-in when the account has it and the
   *   application accepts it as a first factor (the password, after an email code); not in the
   *   portal, where it is a primary verification.
   * - null: never.
   */
  further: "enrolled" | "backup" | "first_factor" | null;
  /**
   * As the portal's primary verification (proving who the user is, within ten minutes):
   * - `"first_factor"`: when the account has it and the application accepts it as a first factor;
   * - `"held"`: when the user holds one, whatever the application accepts;
   * - null: never.
   */
  portalPrimary: "first_factor" | "held" | null;
}

/**
 * A factor answered by a code the user types (an authenticator app's, a recovery code), as a
 * further factor. One procedure answers it, in the sign-in (lib/sign-in/steps/typed-code.ts, at
 * the `second_factor` step when the step offers `kind`) and in the portal's verification
 * (lib/account-security/portal-routes.ts, when the portal offers `kind`): the factor's
 * guessing gate for the account (`gate`, ./limits.ts `factorGate`), `check`, the gate recorded on a
 * wrong code, and in the sign-in the failure recorded as the factor's `failedSignIn` and the page
 * shown with `wrong`. Both routes are bound from these paths; nothing else names them.
 */
export interface TypedCodeAnswer<K extends EvidenceMethod = EvidenceMethod> {
  by: "typed_code";
  /** The kind the step or the portal must offer for the code to be read. */
  kind: K;
  /** The sign-in step's form post (field `code`). */
  signInPath: `/sign-in/${string}`;
  /** The portal's verification form post (field `code`). */
  portalPath: `/account/verify/${string}`;
  /** The guessing limits counted for the account on every code checked (one of the factor's `limits`). */
  gate: GuessingLimits;
  /** Checks the code once for the user; `ip` is the client address, for the factor's own audit event. */
  check: (ctx: Ctx, userId: string, code: string, ip: string | null) => Promise<VerifyResult>;
  /** The hosted error code (one of the factor's `errors`) the sign-in shows a wrong or limited code as. */
  wrong: SignInFormError;
  /**
   * What the code's field is called, in every language (held in the factor's folder, not in the
   * shared catalogue): the pages of a factor that has no parts of its own
   * (components/factors/typed-code.tsx) show its field under it, at the sign-in's step and in the
   * portal's verification.
   */
  label: LocalizedText;
}

export interface Factor<K extends EvidenceMethod = EvidenceMethod> {
  /** Its folder under lib/authn/factors/. */
  folder: string;
  /** The evidence it yields, one rule per kind (a WebAuthn credential is a passkey or a security key). */
  evidence: readonly EvidenceRule<K>[];
  /** Each kind's part in the policy and the portal's step-up. */
  roles: Readonly<Record<K, FactorRole>>;
  /** What the console calls each kind (English, as the console is). */
  labels: Readonly<Record<K, string>>;
  /** Its guessing limits (lib/limits/declarations.ts), counted by ./limits.ts `factorGate` in every flow. */
  limits: readonly GuessingLimits[];
  /** The audit event types its functions write (lib/audit/catalogue.ts). */
  events: readonly AuditEventType[];
  /** The hosted error codes (lib/hosted/errors.ts `SIGN_IN_FORM_ERRORS`) its failures are shown as in the sign-in. */
  errors: readonly SignInFormError[];
  /**
   * What each kind is called in the domain metrics when a sign-in step verified it
   * (`latchkey_sign_ins_total{method}`, lib/sign-in/outcomes.ts; docs/configuration.md, "Domain
   * metrics", lists them): the kind's own name unless a dashboard already knows it by another
   * (the email code's kind is `email_otp`, its label `email_code`).
   */
  metricLabels: Readonly<Record<K, string>>;
  /**
   * The method a failed sign-in with it is recorded as (audit `sign_in.failed`, `data.method`;
   * lib/sign-in/failures.ts), which is also its label in `latchkey_sign_ins_total{outcome="failure"}`;
   * null when they are not recorded (an email code's).
   */
  failedSignIn: string | null;
  /**
   * The name of what its enrolment generates and shows once (recovery codes: the set), as the
   * sign-in's step that shows it and the portal's change that generates it are called; null when
   * nothing is shown once.
   */
  shownOnce: string | null;
  /** The kinds a user can enrol as a second factor when MFA is required (lib/authn/policy.ts), in the order offered. */
  enrollable: readonly K[];
  /** What the user holds of it (null: the account's own, nothing to list: a password, an email code). */
  held: HeldFactors<K> | null;
  /**
   * Enrolment: `start` what the user must prove with (null when the proof comes with no step
   * before it), `complete` it with the proof; a completed enrolment writes
   * `account_security.credential_added` whichever flow enrols it. Null when nothing is enrolled.
   */
  enrol: { start: Operation | null; complete: Operation } | null;
  /** Issues what the user must answer (null when the user answers with what they hold: a password, an app's code). */
  challenge: Operation | null;
  /**
   * Its one verification (the password's `verifyPasswordFactor`, the email code's
   * `verifyEmailCodeFactor`, a typed code's ./typed-code.ts `verifyTypedCode` under its `answer`,
   * WebAuthn's `verifyWebAuthnFactor`):
   * gate, account checks and failure record included, so no caller counts or judges on its own.
   */
  verify: Operation;
  /**
   * How it is answered as a further factor when that is a typed code (`TypedCodeAnswer`); null
   * when it is answered some other way (a password form, an emailed code's own steps, a WebAuthn
   * ceremony), by step modules of their own.
   */
  answer: TypedCodeAnswer<K> | null;
}
