/**
 * Every combination the factors' derived rules are checked over: what a user holds (none, one, two
 * of each held kind, lib/authn/factors/registry.ts `HELD_KINDS`; of a kind whose enrolment is a set
 * shown once, the recovery codes, a set or none; a password or not) and every policy (each ordered
 * choice of first factors, MFA off or required, each passkey enrolment).
 */
import { factorOf, HELD_KINDS, type HeldKind } from "../../lib/authn/factors/registry";
import { FIRST_FACTORS, MFA_MODES, PASSKEY_ENROLLMENT, type AuthPolicy, type EnrolledSummary, type FirstFactor } from "../../lib/authn/policy";

/** The counts tried for `kind`: a set shown once (recovery codes) is held whole or not at all; anything else none, one or two. */
export const countsOf = (kind: HeldKind): readonly number[] => (factorOf(kind).shownOnce ? [0, 3] : [0, 1, 2]);

/**
 * What a user may hold: each combination of counts of `kinds` (every held kind unless named; a
 * rule written for some kinds is compared over those, the others held none).
 */
export function* summaries(kinds: readonly HeldKind[] = HELD_KINDS): Generator<EnrolledSummary> {
  const none = Object.fromEntries(HELD_KINDS.map((k) => [k, 0])) as Record<HeldKind, number>;
  const held = (rest: readonly HeldKind[]): Record<HeldKind, number>[] =>
    rest.length === 0 ? [none] : held(rest.slice(1)).flatMap((counts) => countsOf(rest[0]).map((n) => ({ ...counts, [rest[0]]: n })));
  for (const hasPassword of [true, false]) for (const counts of held(kinds)) yield { hasPassword, ...counts };
}

const orderings = (items: readonly FirstFactor[]): FirstFactor[][] =>
  items.length === 0 ? [[]] : items.flatMap((f, i) => orderings([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [f, ...rest]));
const choices = (items: readonly FirstFactor[]): FirstFactor[][] =>
  items.length === 0 ? [[]] : choices(items.slice(1)).flatMap((rest) => [rest, [items[0], ...rest]]);

export function* policies(): Generator<AuthPolicy> {
  for (const chosen of choices(FIRST_FACTORS))
    for (const firstFactors of chosen.length === 0 ? [] : orderings(chosen))
      for (const mfa of MFA_MODES) for (const passkeyEnrollment of PASSKEY_ENROLLMENT) yield { firstFactors, mfa, passkeyEnrollment, signUp: false };
}
