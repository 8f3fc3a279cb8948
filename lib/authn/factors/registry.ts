/**
 * Every factor, one descriptor per folder (./contract.ts `Factor`). The kinds of factor the rest of
 * the service names (what a user can enrol, hold, list and remove) are derived from this list; a
 * new factor is one line here, and its evidence one line in ./evidence-rules.ts (the plain-data list
 * lib/authn/evidence.ts reads, in the same order).
 */
import { strengthOf, STRENGTHS } from "../evidence";
import { EMAIL_CODE_FACTOR } from "./email-code";
import { PASSWORD_FACTOR } from "./password";
import { RECOVERY_CODES_FACTOR } from "./recovery-codes";
import { TOTP_FACTOR } from "./totp";
import { WEBAUTHN_FACTOR } from "./webauthn";

/** In the order the console and the portal list what a user holds. */
export const FACTORS = [PASSWORD_FACTOR, EMAIL_CODE_FACTOR, WEBAUTHN_FACTOR, TOTP_FACTOR, RECOVERY_CODES_FACTOR] as const;

type Descriptor = (typeof FACTORS)[number];

/** Every kind of factor (an evidence method a factor of Latchkey's yields). */
export type FactorKind = Descriptor["evidence"][number]["method"];

type Enrollable = Descriptor["enrollable"][number];
/**
 * The kinds a user can enrol as a second factor, in the order the sign-in offers them: weakest
 * first (an authenticator app, then a security key and a passkey), each factor's in its own order.
 */
export const ENROLLABLE_KINDS: readonly Enrollable[] = FACTORS.flatMap((f): readonly Enrollable[] => f.enrollable).sort(
  (a, b) => STRENGTHS.indexOf(strengthOf(a)) - STRENGTHS.indexOf(strengthOf(b)),
);
export type EnrollableKind = (typeof ENROLLABLE_KINDS)[number];

type Held = Exclude<Descriptor, { held: null }>;
/** The kinds a user holds and the console and the portal list: what a held factor's descriptor yields. */
export type HeldKind = Held["evidence"][number]["method"];
export const HELD_KINDS = FACTORS.flatMap((f): HeldKind[] => (f.held ? f.evidence.map((e) => e.method as HeldKind) : []));

/** The descriptor of the factor that yields `kind`. */
export function factorOf<K extends FactorKind>(kind: K): Extract<Descriptor, { evidence: readonly { method: K }[] }> {
  const factor = FACTORS.find((f) => f.evidence.some((e) => e.method === kind));
  if (!factor) throw new Error(`no factor yields ${kind}`);
  return factor as Extract<Descriptor, { evidence: readonly { method: K }[] }>;
}

/** What the console calls `kind`, as its factor names it. */
export function labelOf(kind: FactorKind): string {
  return (factorOf(kind).labels as Readonly<Record<FactorKind, string>>)[kind];
}
