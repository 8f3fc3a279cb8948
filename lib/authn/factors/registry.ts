/**
 * Every factor, one descriptor per folder (./contract.ts `Factor`). The kinds of factor the rest of
 * the service names (what a user can enrol, hold, list and remove) are derived from this list; a
 * new factor is one line here, and its evidence one line in ./evidence-rules.ts (the plain-data list
 * lib/authn/evidence.ts reads, in the same order).
 */
import { strengthOf, STRENGTHS } from "../evidence";
import type { EndpointContext } from "../../http/context";
import type { FactorRole, TypedCodeAnswer } from "./contract";
import type { TypedCodeVerification } from "./typed-code";
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

/** Every kind, in the registry's order. */
const KINDS: readonly FactorKind[] = FACTORS.flatMap((f): readonly FactorKind[] => f.evidence.map((e) => e.method));
const ROLES = Object.fromEntries(FACTORS.flatMap((f) => f.evidence.map((e) => [e.method, (f.roles as Readonly<Record<FactorKind, FactorRole>>)[e.method]]))) as Readonly<
  Record<FactorKind, FactorRole>
>;
const IDENTIFIES = new Set<FactorKind>(FACTORS.flatMap((f) => f.evidence.filter((e) => e.primary).map((e) => e.method)));

/** The kinds whose declared role (./contract.ts `FactorRole`) matches `R`, as a type. */
type KindsWith<R> = { [D in Descriptor as D["folder"]]: { [K in keyof D["roles"]]: D["roles"][K] extends R ? K : never }[keyof D["roles"]] }[Descriptor["folder"]];

/** The kinds whose role has `value` in `field`, in the registry's order. */
function kindsWith<F extends keyof FactorRole, V extends FactorRole[F]>(field: F, value: V): KindsWith<Record<F, V>>[] {
  return KINDS.filter((k) => ROLES[k][field] === value) as KindsWith<Record<F, V>>[];
}

/** What `kind` is in the policy and the portal's step-up, as its factor declares it. */
export function roleOf(kind: FactorKind): FactorRole {
  return ROLES[kind];
}

/** Whether `kind` identifies the user (its evidence is primary): a passkey does, a security key does not. */
export function identifiesUser(kind: FactorKind): boolean {
  return IDENTIFIES.has(kind);
}

export function isHeldKind(kind: FactorKind): kind is HeldKind {
  return (HELD_KINDS as readonly FactorKind[]).includes(kind);
}

/**
 * The user's second factors (role `"enrolled"`), in the order they are enrolled and offered. The
 * type check fails if a kind declared `"enrolled"` is not in its factor's `enrollable`.
 */
export type SecondFactorKind = KindsWith<{ further: "enrolled" }>;
export const SECOND_FACTOR_KINDS: readonly SecondFactorKind[] = ENROLLABLE_KINDS.filter((k): k is SecondFactorKind => ROLES[k].further === "enrolled");

/** Kinds offered only beside a second factor (role `"backup"`: recovery codes). */
export type BackupKind = KindsWith<{ further: "backup" }>;
export const BACKUP_KINDS: readonly BackupKind[] = kindsWith("further", "backup");

/** The account's own first factors offered as a further factor when the application accepts them (role `"first_factor"`: the password). */
export type FurtherFirstFactor = KindsWith<{ further: "first_factor" }>;
export const FURTHER_FIRST_FACTORS: readonly FurtherFirstFactor[] = kindsWith("further", "first_factor");

/** What the sign-in may offer as a further factor. */
export type FurtherKind = SecondFactorKind | BackupKind | FurtherFirstFactor;

/** The portal's primary verifications (role `portalPrimary`), in the registry's order. */
export type PortalPrimaryKind = KindsWith<{ portalPrimary: "first_factor" | "held" }>;
export const PORTAL_PRIMARY_KINDS: readonly PortalPrimaryKind[] = [...kindsWith("portalPrimary", "first_factor"), ...kindsWith("portalPrimary", "held")].sort(
  (a, b) => KINDS.indexOf(a) - KINDS.indexOf(b),
);

type AnsweredByTypedCode = Extract<Descriptor, { answer: { by: "typed_code" } }>;
/** The kinds answered by a typed code (./contract.ts `TypedCodeAnswer`). */
export type TypedCodeKind = AnsweredByTypedCode["answer"]["kind"];

/** A factor answered by a typed code, as the sign-in's step and the portal's verification read it. */
export interface TypedCodeFactor {
  folder: string;
  answer: TypedCodeAnswer<TypedCodeKind>;
  /** Its one verification (./typed-code.ts `verifyTypedCode` under `answer`), which the sign-in and the portal call. */
  verify: (ctx: EndpointContext, request: Request, userId: string, code: string) => Promise<TypedCodeVerification>;
  /** What a wrong code in the sign-in is recorded as (audit `sign_in.failed`): every such factor records them. */
  failedSignIn: NonNullable<Descriptor["failedSignIn"]>;
}

/**
 * The factors answered by a typed code, in the registry's order: each has its sign-in step
 * (lib/sign-in/steps/typed-code.ts) and its portal verification (lib/account-security/portal-routes.ts)
 * built from its `answer`, routes included. The type check fails if one records no failed sign-in.
 */
export const TYPED_CODE_FACTORS: readonly TypedCodeFactor[] = FACTORS.filter((f): f is AnsweredByTypedCode => f.answer?.by === "typed_code");

/** The kinds that identify the user (their evidence is primary), as a type. */
export type FirstFactor = Extract<Descriptor["evidence"][number], { primary: true }>["method"];
/**
 * The kinds that may open a session, in the registry's order: those whose evidence identifies the
 * user (a password, an email code, a passkey). An authentication policy's `first_factors` name
 * them (lib/authn/policy.ts).
 */
export const FIRST_FACTORS = FACTORS.flatMap((f): readonly FirstFactor[] => f.evidence.filter((e) => e.primary).map((e) => e.method as FirstFactor)) as unknown as readonly [
  FirstFactor,
  ...FirstFactor[],
];

/** What `kind` is called in the domain metrics when a sign-in step verified it (its factor's `metricLabels`). */
export function metricLabelOf(kind: FactorKind): string {
  return (factorOf(kind).metricLabels as Readonly<Record<FactorKind, string>>)[kind];
}

/**
 * Every label the factors give `latchkey_sign_ins_total{method}`, in the registry's order, each
 * once: each factor's labels for what it verified, then the method its failed sign-ins are
 * recorded as (a refused WebAuthn answer is `webauthn`: a failed assertion does not tell which kind).
 */
export const FACTOR_METRIC_LABELS: readonly string[] = [...new Set(FACTORS.flatMap((f) => signInLabelsOf(f)))];

/** One factor's labels in `latchkey_sign_ins_total{method}`, each once: what it verified, then its failed sign-ins (docs/security.md's table of limits lists them, docs/configuration.md points there). */
export function signInLabelsOf(factor: Descriptor): string[] {
  return [...new Set([...Object.values<string>(factor.metricLabels), ...(factor.failedSignIn ? [factor.failedSignIn] : [])])];
}

/** What a factor's enrolment shows once (./contract.ts `shownOnce`: the recovery-code set), by name. */
export type ShownOnce = NonNullable<Descriptor["shownOnce"]>;
