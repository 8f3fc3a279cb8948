/**
 * What a hosted session records about how its user authenticated, and the values derived from it.
 *
 * A session keeps evidence, not labels: each authentication event (which method, which enrolled
 * factor, when, how strong) is stored on the session, and `auth_time`, `amr` and `acr` in tokens,
 * and the portal's step-up rules, are computed from that list by the pure functions here. Every
 * value below is service-defined (not a third-party certification); docs/sessions.md documents
 * them for integrators.
 */
import type { StoredEvidence } from "../../db/schema";
import { MINUTE } from "../clock";
import { STRENGTHS, type EvidenceRule, type Strength } from "./factors/evidence-rule";
import { FACTOR_EVIDENCE_RULES } from "./factors/evidence-rules";

/** Methods that are not a factor of Latchkey's: a sign-in at another identity provider (lib/federation). */
const FEDERATED = { method: "federated", amr: ["fed"], strength: "knowledge", categories: ["knowledge"], primary: true } as const satisfies EvidenceRule;
/**
 * A federated sign-in whose upstream said it used several factors (`amr` with "mfa"), through a
 * connection configured to trust that: two categories Latchkey did not see, never
 * phishing-resistant (we cannot tell what the upstream used). "fed" is not registered in RFC 8176;
 * it is the value Microsoft Entra ID uses for a federated sign-in.
 */
const FEDERATED_MFA = { method: "federated_mfa", amr: ["fed", "mfa"], strength: "possession", categories: ["knowledge", "possession"], primary: true } as const satisfies EvidenceRule;

/**
 * Every method's evidence: the factors' (lib/authn/factors/evidence-rules.ts, each declared in its
 * folder), then the federated ones. The order is the order of EVIDENCE_METHODS.
 */
export const EVIDENCE_RULES = [...FACTOR_EVIDENCE_RULES, FEDERATED, FEDERATED_MFA] as const;
export type EvidenceMethod = (typeof EVIDENCE_RULES)[number]["method"];
export const EVIDENCE_METHODS: readonly EvidenceMethod[] = EVIDENCE_RULES.map((r) => r.method);

export { STRENGTHS, type Strength };

/** One authentication event of a hosted session. */
export interface Evidence {
  method: EvidenceMethod;
  /** RFC 8176 values this event contributes to the token's `amr`. */
  amr: string[];
  strength: Strength;
  /**
   * Which enrolled factor was used: the `webauthn_credentials` row of a passkey or security key,
   * the `totp_factors` row, the enterprise connection of a federated sign-in. Null for the
   * account's own password, a code sent to the account's email address and the recovery-code set
   * (the user has one of each).
   */
  factorId: string | null;
  /** When it happened: ISO 8601 in UTC, as Date.toISOString() writes it. */
  at: string;
}

const METHODS = Object.fromEntries(EVIDENCE_RULES.map((r): [EvidenceMethod, EvidenceRule] => [r.method, r])) as Record<EvidenceMethod, EvidenceRule>;

/** The strength every event of `method` has (as its factor declares it). */
export function strengthOf(method: EvidenceMethod): Strength {
  return METHODS[method].strength;
}

/** Service-defined assurance levels (`acr`), lowest first. */
export const ACR = {
  /** One factor category: a password, an email code, a federated sign-in. Today's password sign-in. */
  singleFactor: "urn:latchkey:loa:1",
  /** Two or more factor categories (`amr` holds "mfa"), none of them phishing-resistant. */
  multiFactor: "urn:latchkey:loa:2",
  /** Multi-factor with at least one phishing-resistant event (a passkey, or a password plus a security key). */
  phishingResistant: "urn:latchkey:loa:3",
} as const;

/** SPEC "Verification evidence reuse": step-up evidence counts for ten minutes. */
export const EVIDENCE_REUSE_MS = 10 * MINUTE;

/** The event a factor records once it has verified the user (amr and strength fixed per method). */
export function evidenceFor(method: EvidenceMethod, at: Date, factorId: string | null = null): Evidence {
  const rule = METHODS[method];
  return { method, amr: [...rule.amr], strength: rule.strength, factorId, at: at.toISOString() };
}

const timeOf = (e: Evidence) => Date.parse(e.at);

/**
 * Time of the most recent primary authentication, or null when there is none. OIDC Core defines
 * `auth_time` as when the End-User authentication occurred, and `max_age` / `prompt=login` ask
 * for it to be recent: that is answered by re-proving who the user is (a password, an email code,
 * a passkey, a federated sign-in), which moves it. A second factor added later (TOTP, security
 * key, recovery code) raises `amr`/`acr` but does not move `auth_time`: it confirms a session
 * holder, it does not identify the user afresh.
 */
export function authTime(evidence: readonly Evidence[]): Date | null {
  let latest: number | null = null;
  for (const e of evidence) if (METHODS[e.method].primary && (latest === null || timeOf(e) > latest)) latest = timeOf(e);
  return latest === null ? null : new Date(latest);
}

/** Whether the events prove two or more distinct factor categories. */
export function isMultiFactor(evidence: readonly Evidence[]): boolean {
  return new Set(evidence.flatMap((e) => METHODS[e.method].categories)).size >= 2;
}

/**
 * Whether adding an event of `method` would make the evidence multi-factor (a factor category it
 * does not prove yet). A second factor of a category already proved is not multi-factor: after an
 * email code (possession), an authenticator app (possession) adds nothing; a passkey or the
 * password does.
 */
export function completesMultiFactor(evidence: readonly Evidence[], method: EvidenceMethod): boolean {
  return new Set([...evidence.flatMap((e) => METHODS[e.method].categories), ...METHODS[method].categories]).size >= 2;
}

/** The union of the events' amr values in order of first appearance, plus "mfa" when multi-factor. */
export function amrOf(evidence: readonly Evidence[]): string[] {
  const amr = [...new Set(evidence.flatMap((e) => e.amr))];
  if (isMultiFactor(evidence) && !amr.includes("mfa")) amr.push("mfa");
  return amr;
}

export function acrOf(evidence: readonly Evidence[]): string {
  if (!isMultiFactor(evidence)) return ACR.singleFactor;
  return evidence.some((e) => e.strength === "phishing_resistant") ? ACR.phishingResistant : ACR.multiFactor;
}

/** The events still fresh enough to reuse for a step-up: younger than maxAgeMs at `now`. */
export function evidenceSince(evidence: readonly Evidence[], now: Date, maxAgeMs: number): Evidence[] {
  return evidence.filter((e) => timeOf(e) > now.getTime() - maxAgeMs);
}

/**
 * The session's evidence with one more event. A session keeps the latest event per (method,
 * factor), in place: repeating a factor updates its time (and strength) without growing the
 * list, so the list is bounded by the user's factors, and no derivation above changes meaning
 * (each reads only the latest time of a method, or the set of methods).
 */
export function withEvidence(evidence: readonly Evidence[], event: Evidence): Evidence[] {
  const i = evidence.findIndex((e) => e.method === event.method && e.factorId === event.factorId);
  return i < 0 ? [...evidence, event] : evidence.map((e, j) => (j === i ? event : e));
}

export interface SessionClaims {
  authTime: Date;
  amr: string[];
  acr: string;
}

/**
 * The three values a session's evidence gives its tokens. Evidence without a primary event cannot
 * say when the user authenticated: that is refused (a programming error, or a stored session from
 * before evidence existed that the migration could not back-fill), so no token is issued from it.
 */
export function sessionClaims(evidence: readonly Evidence[]): SessionClaims {
  const at = authTime(evidence);
  if (!at) throw new Error("session evidence holds no primary authentication");
  return { authTime: at, amr: amrOf(evidence), acr: acrOf(evidence) };
}

const isMethod = (v: string): v is EvidenceMethod => Object.hasOwn(METHODS, v);
const isStrength = (v: string): v is Strength => (STRENGTHS as readonly string[]).includes(v);

/** Reads stored evidence back, refusing anything this module did not write (no token from a corrupt row). */
export function readEvidence(stored: readonly StoredEvidence[]): Evidence[] {
  return stored.map((e) => {
    const { method, amr, strength, factorId, at } = e;
    if (
      !isMethod(method) ||
      !isStrength(strength) ||
      !Array.isArray(amr) ||
      !amr.every((v) => typeof v === "string") ||
      (factorId !== null && typeof factorId !== "string") ||
      typeof at !== "string" ||
      !Number.isFinite(Date.parse(at))
    ) {
      throw new Error("unreadable session evidence");
    }
    return { method, amr, strength, factorId, at };
  });
}
